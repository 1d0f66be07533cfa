// A wait that ends early when its signal aborts and leaves no listener on the signal either way:
// players and kiosk agents wait between attempts for as long as they are offline, on one signal
// that lives as long as they do, so a listener left behind per wait would grow without bound.

/** Resolves after `ms`, or at once when `signal` aborts (already aborted: now). Never rejects. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
