// Bounded waits for the engine: every wait on the network or a decoder has a deadline, so a page
// that cannot get ready is skipped instead of holding the loop. Listeners and timers are removed
// however a wait ends, so thousands of cycles leave nothing behind.

export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Resolves when `ready()` holds (checked first, then on each `ok` event), rejects on a `fail`
 * event, on the deadline, or when `signal` aborts.
 */
export function waitFor(
  target: EventTarget,
  options: { ready: () => boolean; ok: string[]; fail?: string[]; ms: number; what: string; signal?: AbortSignal },
): Promise<void> {
  if (options.ready()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const fail = options.fail ?? [];
    const cleanup = () => {
      clearTimeout(timer);
      for (const type of options.ok) target.removeEventListener(type, onOk);
      for (const type of fail) target.removeEventListener(type, onFail);
      options.signal?.removeEventListener('abort', onAbort);
    };
    const onOk = () => {
      if (!options.ready()) return;
      cleanup();
      resolve();
    };
    const onFail = (event: Event) => {
      cleanup();
      reject(new Error(`${options.what} failed (${event.type})`));
    };
    const onAbort = () => {
      cleanup();
      reject(new DOMException(`${options.what} was abandoned`, 'AbortError'));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new TimeoutError(options.what, options.ms));
    }, options.ms);
    for (const type of options.ok) target.addEventListener(type, onOk);
    for (const type of fail) target.addEventListener(type, onFail);
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
