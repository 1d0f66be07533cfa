import { describe, expect, it } from 'vitest';
import { MemoryLocks } from './locks';

describe('named locks', () => {
  it('let one holder in at a time: a second caller waits, then holds it once it is given back', async () => {
    const locks = new MemoryLocks();
    const unlock = (await locks.acquire('a', 0))!;
    const order: string[] = [];
    const second = locks.acquire('a', 5000).then((u) => (order.push('second'), u));
    await new Promise((r) => setTimeout(r, 20));
    order.push('first done');
    await unlock();
    const unlockSecond = await second;
    expect(order).toEqual(['first done', 'second']);
    expect(unlockSecond).toBeDefined();
    await unlockSecond!();
    expect(locks.size).toBe(0);
  });

  it('answer undefined when the lock stays held past the wait (at once with no wait)', async () => {
    const locks = new MemoryLocks();
    const unlock = (await locks.acquire('a', 0))!;
    expect(await locks.acquire('a', 0)).toBeUndefined();
    const started = Date.now();
    expect(await locks.acquire('a', 50)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(await locks.acquire('b', 0)).toBeDefined(); // other names are free
    await unlock();
  });

  it('ignore a second unlock: it never frees the next holder', async () => {
    const locks = new MemoryLocks();
    const first = (await locks.acquire('a', 0))!;
    await first();
    const second = (await locks.acquire('a', 0))!;
    await first();
    expect(await locks.acquire('a', 0)).toBeUndefined();
    await second();
    expect(await locks.acquire('a', 0)).toBeDefined();
  });
});
