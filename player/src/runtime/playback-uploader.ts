// Uploads the proof-of-play queue: closed showings, oldest first, in batches, while the player has a
// paired session; a batch is deleted only once the server answered for it. Failing to reach the
// server (or a budget, or a lapsed session) leaves the queue as it is and tries again with backoff;
// back online, the controller nudges it. A batch the server refuses as malformed would block every
// later one, so the one report it names (or, unnamed, the batch) is dropped and logged.
import { MarqueeProblem } from '../../../sdk/client/problem';
import { PLAYBACK_BATCH_MAX, type PlaybackAck, type PlaybackReport } from '../../../sdk/contract/playback';
import { backoffDelay } from '../../../sdk/sse/event-stream-client';
import { reportOf, type PlaybackQueue } from '../offline/playback-queue';

/** How often the queue is looked at while nothing nudges it: proof of play is read by the day, not the second. */
export const UPLOAD_EVERY_MS = 30_000;
const RETRY_INITIAL_MS = 5_000;
const RETRY_MAX_MS = 5 * 60_000;

export interface UploaderOptions {
  queue: PlaybackQueue;
  upload(reports: PlaybackReport[], signal: AbortSignal): Promise<PlaybackAck>;
  /** The playback clock (reports older than the server accepts are dropped against it). */
  now(): number;
  /** Whether the player holds a paired session now (only that may upload). */
  canUpload(): boolean;
  /** Tells the server how many showings were dropped at the queue's bound. */
  reportDropped(count: number): Promise<void>;
  log(message: string): void;
  everyMs?: number;
}

export class PlaybackUploader {
  private readonly stop = new AbortController();
  private wake: (() => void) | null = null;
  private failures = 0;

  constructor(private readonly options: UploaderOptions) {}

  /** Runs until destroyed. */
  start(): void {
    void this.loop();
  }

  /** Look now (the player is back online, or has a session again). */
  nudge(): void {
    this.wake?.();
  }

  destroy(): void {
    this.stop.abort();
    this.wake?.();
  }

  private async loop(): Promise<void> {
    while (!this.stop.signal.aborted) {
      let delay = this.options.everyMs ?? UPLOAD_EVERY_MS;
      if (this.options.canUpload()) {
        try {
          await this.flush();
          this.failures = 0;
        } catch (error) {
          if (this.stop.signal.aborted) return;
          delay = backoffDelay(this.failures++, RETRY_INITIAL_MS, RETRY_MAX_MS);
          if (error instanceof MarqueeProblem) this.options.log(`proof of play upload refused: ${error.code}`);
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /** Uploads batches until the queue holds no closed showing; throws when the server could not take one. */
  async flush(): Promise<number> {
    const { queue } = this.options;
    let uploaded = 0;
    for (;;) {
      const batch = await queue.nextBatch(this.options.now());
      if (batch.length === 0) break;
      try {
        await this.options.upload(batch.map(reportOf), this.stop.signal);
        await queue.acknowledge(batch);
        uploaded += batch.length;
      } catch (error) {
        if (!(error instanceof MarqueeProblem) || error.status !== 400) throw error;
        const index = malformedIndex(error);
        const dropped = index !== undefined && batch[index] ? [batch[index]] : batch;
        this.options.log(`proof of play: the server refused ${dropped.length} malformed report(s): ${error.detail}`);
        await queue.acknowledge(dropped);
        continue;
      }
      if (batch.length < PLAYBACK_BATCH_MAX) break;
    }
    if (queue.dropped > 0) {
      const count = queue.dropped;
      await this.options.reportDropped(count);
      queue.dropped -= count;
    }
    return uploaded;
  }
}

/** The batch index an invalid_request names (`reports.3.ended_at` → 3). */
function malformedIndex(problem: MarqueeProblem): number | undefined {
  const match = /^reports\.(\d+)(\.|$)/.exec(problem.errors[0]?.field ?? '');
  return match ? Number(match[1]) : undefined;
}
