import { afterEach, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';
import { utcDay } from '../tenants/credits';
import { EgressLedger, MEDIA_EXPORT_EGRESS } from './egress';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function rows(s: TestServer) {
  return s.services.store.db.selectFrom('egress_ledger').selectAll().orderBy('kind').execute();
}

describe('EgressLedger', () => {
  it('adds responses up in memory and commits them together: one row per tenant, day and kind', async () => {
    server = await TestServer.start();
    const { projectId: tnt_a } = await server.enroll();
    const ledger = new EgressLedger(server.services.store, server.services.logger, 60_000);
    const now = server.clock.now();
    ledger.record(tnt_a, MEDIA_EXPORT_EGRESS, 100, now);
    ledger.record(tnt_a, MEDIA_EXPORT_EGRESS, 50, now);
    ledger.record(tnt_a, 'runtime_media_delivery', 7, now);
    expect(await rows(server)).toEqual([]);
    await ledger.flush();
    ledger.record(tnt_a, MEDIA_EXPORT_EGRESS, 1, now);
    await ledger.flush();
    await ledger.flush(); // nothing pending: nothing written
    expect(await rows(server)).toEqual([
      { tenant_id: tnt_a, day: utcDay(now), kind: MEDIA_EXPORT_EGRESS, bytes: 151, count: 3 },
      { tenant_id: tnt_a, day: utcDay(now), kind: 'runtime_media_delivery', bytes: 7, count: 1 },
    ]);
  });

  it('commits on its own within its interval, and whatever is left when the store closes', async () => {
    server = await TestServer.start();
    const { projectId: tnt_b } = await server.enroll();
    const ledger = new EgressLedger(server.services.store, server.services.logger, 20);
    const now = server.clock.now();
    ledger.record(tnt_b, MEDIA_EXPORT_EGRESS, 10, now);
    await new Promise((r) => setTimeout(r, 100));
    expect((await rows(server)).map((r) => r.bytes)).toEqual([10]);

    const dataDir = server.dataDir;
    const late = new EgressLedger(server.services.store, server.services.logger, 60_000);
    late.record(tnt_b, MEDIA_EXPORT_EGRESS, 5, now);
    await server.stop({ keepData: true });
    server = await TestServer.start({ dataDir });
    expect((await rows(server)).map((r) => r.bytes)).toEqual([15]);
  });
});
