// Pairing as the player lives it: ask for a code, show it, wait on the pairing stream for the
// claim, complete with the claim's nonce (the server sets the paired-device cookie). A code is
// replaced by a fresh one shortly before it expires, so the code on glass is always claimable; the
// server retires the old code in the same step (same pairing cookie), and if the old code was
// claimed just before, it answers 409 and the player completes that claim instead.
import { MarqueeProblem } from '../../../sdk/client/problem';
import type { RuntimeClient } from '../../../sdk/client/runtime';
import type { PairingClaimedEvent, PairingCompletion } from '../../../sdk/contract/screens';

/** Show a new code this long before the old one expires (an operator needs time to type it). */
export const CODE_RENEWAL_MARGIN_MS = 60_000;
/** Never renew more often than this, whatever the server's expiry says. */
export const MIN_CODE_LIFETIME_MS = 30_000;
/** How long to wait for the replayed claim of a code claimed just as it was replaced. */
const CLAIMED_REPLAY_WAIT_MS = 30_000;

export interface PairingFlowOptions {
  client: RuntimeClient;
  signal: AbortSignal;
  onCode(code: string, expiresAt: number): void;
  now?: () => number;
}

/** When to replace a code that expires at `expiresAt`. */
export function renewalDelay(expiresAt: number, now: number): number {
  return Math.max(MIN_CODE_LIFETIME_MS, expiresAt - now - CODE_RENEWAL_MARGIN_MS);
}

/** Resolves with the completion once an agent claimed a code and the player completed pairing. */
export async function pairScreen(options: PairingFlowOptions): Promise<PairingCompletion> {
  const now = options.now ?? Date.now;
  for (;;) {
    options.signal.throwIfAborted();
    let session;
    try {
      session = await options.client.startPairing(options.signal);
    } catch (error) {
      if (!(error instanceof MarqueeProblem && error.status === 409)) throw error;
      // The code on glass was claimed as it was being replaced: the stream replays the claim.
      const nonce = await waitForClaim(options, CLAIMED_REPLAY_WAIT_MS);
      if (nonce !== null) return options.client.completePairing(nonce, options.signal);
      continue;
    }
    const expiresAt = Date.parse(session.expires_at);
    options.onCode(session.code, expiresAt);
    const nonce = await waitForClaim(options, renewalDelay(expiresAt, now()));
    if (nonce !== null) return options.client.completePairing(nonce, options.signal);
  }
}

/** The claim's completion nonce, or null when the code is due for renewal first. */
function waitForClaim(options: PairingFlowOptions, renewAfterMs: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const stop = new AbortController();
    const finish = (fn: () => void) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      stop.abort();
      fn();
    };
    const onAbort = () => finish(() => reject(options.signal.reason));
    const timer = setTimeout(() => finish(() => resolve(null)), renewAfterMs);
    options.signal.addEventListener('abort', onAbort, { once: true });
    const stream = options.client.pairingEvents({
      signal: stop.signal,
      maxDelayMs: 10_000,
      onEvent: (message) => {
        if (message.type !== 'pairing.claimed') return;
        const nonce = (message.data as PairingClaimedEvent | undefined)?.completion_nonce;
        if (typeof nonce === 'string') finish(() => resolve(nonce));
      },
    });
    // A refusal no retry fixes (the pairing cookie lapsed): start over with a new code.
    stream.done.catch(() => finish(() => resolve(null)));
  });
}
