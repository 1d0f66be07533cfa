// What sharing rate windows and presence across replicas costs: the in-memory limiter and presence
// (one process, the baseline) against the PostgreSQL tables replicas share, on a throwaway cluster
// (server/testing/postgres-cluster.sh), 32 concurrent callers, same run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../server/clock';
import { MemoryRateLimiter, type RateLimiter } from '../server/http/rate-limit';
import { createLogger } from '../server/logger';
import { SharedPresence } from '../server/replicas/shared-presence';
import { SharedRateLimiter } from '../server/replicas/shared-rate-limiter';
import { MemoryPresence, type ScreenPresence } from '../server/runtime/presence';
import { openStore } from '../server/store/store';
import { ratio, table } from './harness';

const CALLERS = 32;
const OPS_PER_CALLER = 300;
const CLUSTER = path.join(import.meta.dirname, '../server/testing/postgres-cluster.sh');

async function opsPerSecond(one: (caller: number, i: number) => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      for (let i = 0; i < OPS_PER_CALLER; i++) await one(caller, i);
    }),
  );
  return (CALLERS * OPS_PER_CALLER) / (Number(process.hrtime.bigint() - started) / 1e9);
}

function takes(limiter: RateLimiter) {
  // Each caller is one client with its own budget, as requests from many screens are.
  return (caller: number) =>
    limiter.take({ name: 'bench', limit: 1e9, windowSeconds: 60, key: `client-${caller}` }, Date.now());
}

function connects(presence: ScreenPresence) {
  return async (caller: number, i: number) => {
    const disconnect = await presence.connect(`scr_${caller}_${i % 10}`);
    await disconnect();
  };
}

function onlineReads(presence: ScreenPresence) {
  const ids = Array.from({ length: 500 }, (_, i) => `scr_${i % CALLERS}_${i % 10}`);
  return () => presence.online(ids);
}

export async function replicaState(): Promise<void> {
  const port = String(56000 + Math.floor(Math.random() * 1000));
  const env = execFileSync(CLUSTER, ['start', port], { encoding: 'utf8' });
  const url = /MARQUEE_TEST_DATABASE_URL=(\S+)/.exec(env)![1]!;
  const clusterDir = /MARQUEE_TEST_PG_DIR=(\S+)/.exec(env)![1]!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-bench-replicas-'));
  const store = await openStore(url);
  try {
    await store.migrate();
    const logger = createLogger('silent');
    const memoryLimiter = new MemoryRateLimiter();
    const sharedLimiter = new SharedRateLimiter(store.db);
    const memoryPresence = new MemoryPresence(systemClock);
    const sharedPresence = new SharedPresence(store.db, systemClock, logger);
    await opsPerSecond(takes(sharedLimiter)); // warm-up
    const rows: Record<string, string | number>[] = [];
    const pair = async (what: string, memory: () => Promise<number>, shared: () => Promise<number>) => {
      const base = await memory();
      const other = await shared();
      rows.push({ what, store: 'memory (one process)', 'ops/s': Math.round(base), ratio: '1.00x' });
      rows.push({ what, store: 'PostgreSQL (replicas)', 'ops/s': Math.round(other), ratio: ratio(other, base) });
    };
    await pair(
      'rate take',
      () => opsPerSecond(takes(memoryLimiter)),
      () => opsPerSecond(takes(sharedLimiter)),
    );
    await pair(
      'presence connect+disconnect',
      () => opsPerSecond(connects(memoryPresence)),
      () => opsPerSecond(connects(sharedPresence)),
    );
    await pair(
      'presence online(500 ids)',
      () => opsPerSecond(onlineReads(memoryPresence)),
      () => opsPerSecond(onlineReads(sharedPresence)),
    );
    await sharedPresence.close();
    table(rows);
  } finally {
    await store.close();
    execFileSync(CLUSTER, ['stop', clusterDir]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
