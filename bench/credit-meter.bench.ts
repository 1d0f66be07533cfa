// The credit meter's debits under concurrency: one transaction per debit (the baseline) against the
// RequestMeter's group commit, both on one SQLite store in this process, 32 concurrent callers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../server/store/store';
import { debit } from '../server/tenants/credits';
import { RequestMeter } from '../server/tenants/request-meter';
import { ratio, table } from './harness';

const CALLERS = 32;
const DEBITS_PER_CALLER = 500;

async function debitsPerSecond(one: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      for (let i = 0; i < DEBITS_PER_CALLER; i++) await one();
    }),
  );
  return (CALLERS * DEBITS_PER_CALLER) / (Number(process.hrtime.bigint() - started) / 1e9);
}

export async function creditMeterDebits(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-bench-meter-'));
  const store = await openStore(`sqlite:${path.join(dir, 'meter.db')}`);
  try {
    await store.migrate();
    const now = Date.now();
    const month = new Date(now).toISOString().slice(0, 7);
    await store.db
      .insertInto('tenants')
      .values({
        id: 'prj_bench',
        generation: 'P',
        name: 'bench',
        email: 'bench@example.com',
        plan: 'signage',
        status: 'active',
        revision: 1,
        content_limit_bytes: 0,
        screen_limit: 0,
        credit_millis: 1e12,
        credit_grant_month: month,
        created_at: now,
        updated_at: now,
      } as never)
      .execute();
    const known = { plan: 'signage', grantMonth: month };
    const meter = new RequestMeter(store);
    const single = () => store.transaction(({ db }) => debit(db, 'prj_bench', now, 'api_request', 1000, known));
    const grouped = () => meter.debit('prj_bench', now, 1000, known);
    await debitsPerSecond(single); // warm-up
    const baseline = await debitsPerSecond(single);
    const group = await debitsPerSecond(grouped);
    table([
      { debits: 'one transaction per debit', 'debits/s': Math.round(baseline), ratio: '1.00x' },
      { debits: 'RequestMeter group commit', 'debits/s': Math.round(group), ratio: ratio(group, baseline) },
    ]);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
