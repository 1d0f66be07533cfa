// Request/response correlation of a bridge child: each request waits for the parent's answer to
// its message id, within the ack timeout, and only an answer of the same activation counts.
import { BridgeError, type AckPayload, type Activation, type BridgeErrorCode, type ProblemPayload } from './protocol';

/** The window's timers (a frame's own, so a test can fake them). */
export type Timers = Pick<Window, 'setTimeout' | 'clearTimeout'>;

interface Pending {
  resolve(result: unknown): void;
  reject(error: BridgeError): void;
  timer: number;
  generation: number;
  nonce: string;
}

/** The answer kinds, as checkParentPayload returns them. */
export type Answer = { kind: 'response.ack'; value: AckPayload } | { kind: 'response.problem'; value: ProblemPayload };

export class PendingRequests {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly timers: Timers,
    private readonly ackTimeoutMs: number,
  ) {}

  /** Waits for the answer to `messageId`, sent for `activation`; rejects with ack_timeout when none comes. */
  wait(messageId: string, kind: string, activation: Activation): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = this.timers.setTimeout(() => {
        this.pending.delete(messageId);
        reject(new BridgeError('ack_timeout', `${kind} got no answer within ${this.ackTimeoutMs} ms`));
      }, this.ackTimeoutMs);
      this.pending.set(messageId, {
        resolve,
        reject,
        timer,
        generation: activation.generation,
        nonce: activation.nonce,
      });
    });
  }

  /** Settles the request an answer is for; what was wrong with it when it answers nothing pending. */
  answer({ kind, value }: Answer): { code: BridgeErrorCode; detail: string } | null {
    const waiting = this.pending.get(value.request_message_id);
    if (!waiting) return { code: 'invalid_response', detail: 'answer to no pending request' };
    if (waiting.generation !== value.generation || waiting.nonce !== value.nonce)
      return { code: 'invalid_generation', detail: 'answer for another activation' };
    this.pending.delete(value.request_message_id);
    this.timers.clearTimeout(waiting.timer);
    if (kind === 'response.ack') {
      waiting.resolve(value.result);
    } else {
      const problem = value.problem;
      waiting.reject(
        new BridgeError(problem.code, problem.detail, {
          status: problem.status,
          requestId: problem.request_id,
          currentRevision: problem.current_revision,
        }),
      );
    }
    return null;
  }

  /** Rejects every request still waiting (a reactivation, or the bridge destroyed). */
  rejectAll(code: BridgeErrorCode, detail: string): void {
    for (const [id, p] of this.pending) {
      this.timers.clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new BridgeError(code, detail));
    }
  }
}
