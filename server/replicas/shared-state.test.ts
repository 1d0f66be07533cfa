// Rate windows and presence in the database, as two replicas see them: two stores (two connection
// pools, as two processes would hold) on one database. Runs on the engine MARQUEE_TEST_DATABASE_URL
// names (PostgreSQL under npm run test:postgres, else SQLite, where the same SQL must hold too).
import { beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { createLogger } from '../logger';
import type { RateBudget } from '../http/rate-limit';
import type { Store } from '../store/store';
import { useTestStore } from '../testing/test-store';
import { SharedPresence } from './shared-presence';
import { SharedRateLimiter } from './shared-rate-limiter';

const testStore = useTestStore('shared');
let one: Store;
let two: Store;
beforeAll(async () => {
  one = testStore.store;
  two = await testStore.another();
});

const budget = (key: string, limit: number, cost?: number): RateBudget => ({
  name: 'test-budget',
  limit,
  windowSeconds: 60,
  key,
  ...(cost === undefined ? {} : { cost }),
});

describe('shared rate windows', () => {
  it('two replicas taking at once spend one budget: exactly its limit is allowed, never twice that', async () => {
    const a = new SharedRateLimiter(one.db);
    const b = new SharedRateLimiter(two.db);
    const now = 1_800_000_000_000;
    const takes = Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).take(budget('client-1', 15), now));
    const decisions = await Promise.all(takes);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(15);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
    expect((await a.peek(budget('client-1', 15), now)).allowed).toBe(false);
    expect((await b.peek(budget('client-1', 15), now)).remaining).toBe(0);
  });

  it('counts cost, refuses what does not fit without spending, and restarts in the next window', async () => {
    const a = new SharedRateLimiter(one.db);
    const b = new SharedRateLimiter(two.db);
    const now = 1_800_000_000_000;
    expect(await a.take(budget('client-2', 10, 4), now)).toMatchObject({ allowed: true, remaining: 6 });
    expect(await b.take(budget('client-2', 10, 4), now + 1000)).toMatchObject({ allowed: true, remaining: 2 });
    expect(await a.take(budget('client-2', 10, 4), now + 2000)).toMatchObject({ allowed: false, remaining: 2 });
    expect(await b.take(budget('client-2', 10, 2), now + 2000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await a.take(budget('client-2', 10, 11), now + 2000)).toMatchObject({ allowed: false });
    expect((await a.peek(budget('client-2', 10), now + 2000)).resetSeconds).toBe(58);
    // The next minute's window starts empty, on either replica.
    expect(await b.take(budget('client-2', 10, 4), now + 60_000)).toMatchObject({ allowed: true, remaining: 6 });
    // A replica whose clock lags a window behind adds to the current one instead of restarting it.
    expect(await a.take(budget('client-2', 10, 4), now + 59_000)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('holds long keys and keys with control characters (PostgreSQL text holds no NUL)', async () => {
    const a = new SharedRateLimiter(one.db);
    const now = 1_800_000_000_000;
    expect((await a.take(budget('x'.repeat(500), 1), now)).allowed).toBe(true);
    expect((await a.take(budget('x'.repeat(500), 1), now)).allowed).toBe(false);
    expect((await a.take(budget('a\u0000b', 1), now)).allowed).toBe(true);
    expect((await a.take(budget('a\u0000b', 1), now)).allowed).toBe(false);
  });
});

describe('shared presence', () => {
  const logger = createLogger('silent');

  it('shows a screen online on every replica while one holds its stream, and for the grace after', async () => {
    const clock = new TestClock();
    const a = new SharedPresence(one.db, clock, logger, 30_000, 3000);
    const b = new SharedPresence(two.db, clock, logger, 30_000, 3000);
    const first = await a.connect('scr_1');
    const second = await a.connect('scr_1');
    expect([...(await b.online(['scr_1', 'scr_2']))]).toEqual(['scr_1']);
    await first();
    await first(); // a second call does nothing
    clock.advance(10_000);
    expect(await b.online(['scr_1'])).toEqual(new Set(['scr_1'])); // the other stream still holds it
    await second();
    clock.advance(2000);
    expect(await b.online(['scr_1'])).toEqual(new Set(['scr_1']));
    clock.advance(1500);
    expect(await b.online(['scr_1'])).toEqual(new Set());
    await a.close();
    await b.close();
  });

  it('counts streams of one screen on two replicas apart: one closing leaves it online', async () => {
    const clock = new TestClock();
    const a = new SharedPresence(one.db, clock, logger, 30_000, 3000);
    const b = new SharedPresence(two.db, clock, logger, 30_000, 3000);
    const onA = await a.connect('scr_3');
    await b.connect('scr_3');
    await onA();
    clock.advance(10_000);
    expect(await a.online(['scr_3'])).toEqual(new Set(['scr_3']));
    await a.close();
    await b.close();
  });

  it('lets a dead replica’s screens go offline when its lease runs out, and keeps a live one’s renewed', async () => {
    const clock = new TestClock();
    const dead = new SharedPresence(one.db, clock, logger, 30_000, 3000);
    const live = new SharedPresence(two.db, clock, logger, 30_000, 3000);
    await dead.connect('scr_4');
    await live.connect('scr_5');
    dead.abandon(); // it stops renewing, as a killed process would
    clock.advance(20_000);
    await live.renew();
    clock.advance(20_000);
    expect(await live.online(['scr_4', 'scr_5'])).toEqual(new Set(['scr_5']));
    await live.close();
  });

  it('lets a replica that stops cleanly release its screens: offline after the grace, not the lease', async () => {
    const clock = new TestClock();
    const stopping = new SharedPresence(one.db, clock, logger, 30_000, 3000);
    const other = new SharedPresence(two.db, clock, logger, 30_000, 3000);
    await stopping.connect('scr_6');
    await stopping.close();
    expect(await other.online(['scr_6'])).toEqual(new Set(['scr_6']));
    clock.advance(3000);
    expect(await other.online(['scr_6'])).toEqual(new Set());
    await other.close();
  });
});
