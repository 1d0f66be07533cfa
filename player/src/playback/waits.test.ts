import { describe, expect, it } from 'vitest';
import { TimeoutError, waitFor, withTimeout } from './waits';

class CountingTarget extends EventTarget {
  listeners = 0;
  override addEventListener(...args: Parameters<EventTarget['addEventListener']>) {
    this.listeners++;
    super.addEventListener(...args);
  }
  override removeEventListener(...args: Parameters<EventTarget['removeEventListener']>) {
    this.listeners--;
    super.removeEventListener(...args);
  }
}

describe('bounded waits', () => {
  it('resolves at once when already ready', async () => {
    await expect(
      waitFor(new EventTarget(), { ready: () => true, ok: ['load'], ms: 10, what: 'x' }),
    ).resolves.toBeUndefined();
  });

  it('resolves on an ok event that makes it ready and removes its listeners', async () => {
    const target = new CountingTarget();
    let ready = false;
    const waiting = waitFor(target, { ready: () => ready, ok: ['canplay'], fail: ['error'], ms: 1000, what: 'video' });
    target.dispatchEvent(new Event('canplay')); // not ready yet: keeps waiting
    ready = true;
    target.dispatchEvent(new Event('canplay'));
    await waiting;
    expect(target.listeners).toBe(0);
  });

  it('rejects on a failure event, on its deadline and on abort, leaving no listener behind', async () => {
    const target = new CountingTarget();
    const failing = waitFor(target, { ready: () => false, ok: ['load'], fail: ['error'], ms: 1000, what: 'image' });
    target.dispatchEvent(new Event('error'));
    await expect(failing).rejects.toThrow('image failed (error)');
    await expect(waitFor(target, { ready: () => false, ok: ['load'], ms: 5, what: 'frame' })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    const abort = new AbortController();
    const abandoned = waitFor(target, {
      ready: () => false,
      ok: ['load'],
      ms: 1000,
      what: 'frame',
      signal: abort.signal,
    });
    abort.abort();
    await expect(abandoned).rejects.toThrow('abandoned');
    expect(target.listeners).toBe(0);
  });

  it('bounds any promise', async () => {
    await expect(withTimeout(new Promise(() => undefined), 5, 'launch')).rejects.toThrow(
      'launch did not finish within 5 ms',
    );
    await expect(withTimeout(Promise.resolve(3), 5, 'launch')).resolves.toBe(3);
  });
});
