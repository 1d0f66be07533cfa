// Billing (spec: Endpoints / Projects …; Resources: BillingBalance): the balance in canonical
// decimal millicredit strings with rails_available false, and the statement of the credit ledger
// in cursor pages whose limit out of range is invalid_request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { TestServer } from '../testing/harness';
import { millicredits } from '../../sdk/contract/billing';

let server: TestServer;
let clock: TestClock;

beforeAll(async () => {
  clock = new TestClock('2026-11-25T12:00:00Z');
  server = await TestServer.start({ clock });
});
afterAll(async () => server.stop());

describe('the balance', () => {
  it('answers canonical decimal millicredit strings, the floor of the day, and rails_available false', async () => {
    const { token } = await server.enroll();
    const res = await server.request('GET', '/api/v1/billing/balance', { token });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    // The included 10,000 credits, less the enrollment-free first request: this one.
    expect(res.json()).toEqual({
      balance_millicredits: '9999000',
      included_millicredits: '10000000',
      floor_millicredits: '-1000000000',
      next_grant_at: '2026-12-01T00:00:00.000Z',
      rails_available: false,
    });
    expect(res.headers['marquee-credits-remaining']).toBe('9999');
  });

  it('reads a floor of zero from 2027-01-01 on', async () => {
    const own = await TestServer.start({ clock: new TestClock('2027-01-01T00:00:00Z') });
    try {
      const { token } = await own.enroll();
      expect((await own.request('GET', '/api/v1/billing/balance', { token })).json().floor_millicredits).toBe('0');
    } finally {
      await own.stop();
    }
  });

  it('writes amounts without leading zeros, plus signs or a negative zero', () => {
    expect(millicredits(0)).toBe('0');
    expect(millicredits(-0)).toBe('0');
    expect(millicredits(-1_000_000_000)).toBe('-1000000000');
    expect(() => millicredits(1.5)).toThrow();
  });
});

describe('the statement', () => {
  it('lists the ledger by day, newest first, with signed amounts and counts', async () => {
    const { token } = await server.enroll();
    await server.request('GET', '/api/v1/screens', { token });
    clock.advance(24 * 3600_000);
    await server.request('GET', '/api/v1/screens', { token });
    const res = await server.request('GET', '/api/v1/billing/statement', { token });
    expect(res.status).toBe(200);
    const items = res.json().items;
    expect(items[0]).toEqual({ day: '2026-11-26', kind: 'api_request', amount_millicredits: '-2000', count: 2 });
    expect(items).toContainEqual({
      day: '2026-11-25',
      kind: 'included_grant',
      amount_millicredits: '10000000',
      count: 1,
    });
    expect(items).toContainEqual({ day: '2026-11-25', kind: 'api_request', amount_millicredits: '-1000', count: 1 });
    // The ledger adds up to the balance (less the balance read's own credit, debited after the statement).
    const balance = (await server.request('GET', '/api/v1/billing/balance', { token })).json().balance_millicredits;
    const sum = items.reduce((total: number, i: any) => total + Number(i.amount_millicredits), 0);
    expect(sum - 1000).toBe(Number(balance));
  });

  it('pages with an opaque cursor', async () => {
    const { token } = await server.enroll();
    for (let day = 0; day < 4; day++) {
      await server.request('GET', '/api/v1/screens', { token });
      clock.advance(24 * 3600_000);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (
        await server.request('GET', `/api/v1/billing/statement?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token })
      ).json();
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i: any) => `${i.day}/${i.kind}`));
      cursor = page.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThanOrEqual(5);
    expect(
      [...seen].sort((a, b) => (a.slice(0, 10) === b.slice(0, 10) ? a.localeCompare(b) : b.localeCompare(a))),
    ).toEqual(seen);
  });

  it('answers invalid_request for a limit out of range or a cursor it did not issue', async () => {
    const { token } = await server.enroll();
    for (const query of ['limit=0', 'limit=201', 'limit=ten', 'cursor=abc']) {
      const res = await server.request('GET', `/api/v1/billing/statement?${query}`, { token });
      expect(res.status, query).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
  });

  it('is a project route: an account bearer is forbidden', async () => {
    const { token } = await server.createAccount();
    expect((await server.request('GET', '/api/v1/billing/balance', { token })).status).toBe(403);
  });
});
