// Fleet actions over 500 screens, in this process on one store: an assign and a takeover by fleet
// action (each screen through its single-screen code path, in groups of 50 a transaction) against a
// raw driver loop of the same writes (one transaction a screen: the screen row, its reference, its
// events) on other screens of the same database in the same run; then the 500 players' manifest
// fetches after the takeover (each mints its screen's new revision).
// `fleet`: SQLite, the raw loop on better-sqlite3. Goal (issue 16): p50 ≤ 300 ms and at least 0.5x
// the raw loop's speed. `fleet-pg`: the same on a throwaway PostgreSQL cluster
// (server/testing/postgres-cluster.sh), the raw loop on pg with prepared statements (issue 21).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { runFleetAction } from '../server/fleet/fleet-actions';
import { insertScreensShowing } from '../server/manifests/manifests.fixtures';
import { currentManifest } from '../server/manifests/minting';
import { imageDoc, insertMedia } from '../server/playlists/content.fixtures';
import { TestServer } from '../server/testing/harness';
import { median, ratio, table } from './harness';

const FLEET = 500;
const ROUNDS = 7;
/** Rounds run first and not counted: the figures are a long-running server's, with its code optimized. */
const WARMUP = 2;

/** Wall time of fn in ms; its CPU time (this process, user + system) goes to `cpu` when given. */
async function timed(fn: () => Promise<unknown> | unknown, cpu?: number[]): Promise<number> {
  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(cpuStarted);
  cpu?.push((used.user + used.system) / 1000);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const CLUSTER = path.join(import.meta.dirname, '../server/testing/postgres-cluster.sh');

/** The raw loop's writes for one screen's assignment, as the server writes them: screen row, reference, two events. */
const RAW = {
  update:
    'UPDATE screens SET playlist_id = $1, effective_playlist_id = $1, revision = revision + 1, manifest_revision = manifest_revision + 1, updated_at = $2 WHERE id = $3 AND tenant_id = $4',
  unref: "DELETE FROM screen_playlist_references WHERE screen_id = $1 AND role = 'assignment'",
  ref: "INSERT INTO screen_playlist_references (screen_id, tenant_id, playlist_id, role, entry_id) VALUES ($1, $2, $3, 'assignment', '')",
  event:
    "INSERT INTO events (tenant_id, screen_id, type, severity, message, resource_type, resource_id, details, runtime, request_id, operation_id, at) VALUES ($1, $2, $3, 'info', 'raw', 'screen', $2, '{}', 0, NULL, NULL, $4)",
};

/** A raw loop over its screens: each screen's assignment in its own transaction. */
interface RawLoop {
  assign(screens: readonly string[], tenantId: string, playlistId: string, now: number): Promise<void>;
  close(): Promise<void>;
}

/** better-sqlite3 on the server's database file, statements prepared once. */
function sqliteLoop(databaseUrl: string): RawLoop {
  const raw = new SQLite(databaseUrl.replace(/^sqlite:/, ''));
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  const positional = (text: string) => text.replace(/\$\d/g, '?');
  const update = raw.prepare(
    'UPDATE screens SET playlist_id = ?, effective_playlist_id = ?, revision = revision + 1, manifest_revision = manifest_revision + 1, updated_at = ? WHERE id = ? AND tenant_id = ?',
  );
  const unref = raw.prepare(positional(RAW.unref));
  const ref = raw.prepare(positional(RAW.ref));
  const event = raw.prepare(
    "INSERT INTO events (tenant_id, screen_id, type, severity, message, resource_type, resource_id, details, runtime, request_id, operation_id, at) VALUES (?, ?, ?, 'info', 'raw', 'screen', ?, '{}', 0, NULL, NULL, ?)",
  );
  const assignOne = raw.transaction((id: string, tenantId: string, playlistId: string, now: number) => {
    update.run(playlistId, playlistId, now, id, tenantId);
    unref.run(id);
    ref.run(id, tenantId, playlistId);
    event.run(tenantId, id, 'screen.updated', id, now);
    event.run(tenantId, id, 'screen.manifest_changed', id, now);
  });
  return {
    async assign(screens, tenantId, playlistId, now) {
      for (const id of screens) assignOne(id, tenantId, playlistId, now);
    },
    async close() {
      await raw.close();
    },
  };
}

/** One pg connection to the server's database, named (prepared) statements. */
async function postgresLoop(databaseUrl: string): Promise<RawLoop> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const run = (name: keyof typeof RAW, values: unknown[]) => client.query({ name, text: RAW[name], values });
  return {
    async assign(screens, tenantId, playlistId, now) {
      for (const id of screens) {
        await client.query('BEGIN');
        await run('update', [playlistId, now, id, tenantId]);
        await run('unref', [id]);
        await run('ref', [id, tenantId, playlistId]);
        await run('event', [tenantId, id, 'screen.updated', now]);
        await run('event', [tenantId, id, 'screen.manifest_changed', now]);
        await client.query('COMMIT');
      }
    },
    close: () => client.end(),
  };
}

export async function fleetActions(): Promise<void> {
  await fleetBench({}, (url) => Promise.resolve(sqliteLoop(url)), 'raw better-sqlite3 loop');
}

export async function fleetActionsPostgres(): Promise<void> {
  const port = String(56000 + Math.floor(Math.random() * 1000));
  const env = execFileSync(CLUSTER, ['start', port], { encoding: 'utf8' });
  const url = /MARQUEE_TEST_DATABASE_URL=(\S+)/.exec(env)![1]!;
  const clusterDir = /MARQUEE_TEST_PG_DIR=(\S+)/.exec(env)![1]!;
  try {
    await fleetBench({ databaseUrl: url }, postgresLoop, 'raw pg loop');
  } finally {
    execFileSync(CLUSTER, ['stop', clusterDir]);
  }
}

async function fleetBench(
  config: { databaseUrl?: string },
  openRaw: (databaseUrl: string) => Promise<RawLoop>,
  rawName: string,
): Promise<void> {
  const server = await TestServer.start({ config: { logLevel: 'silent', ...config } });
  try {
    const { services } = server;
    const { token, projectId } = await server.enroll();
    const playlist = async () => {
      const media = await insertMedia(server, projectId);
      const res = await server.request('POST', '/api/v1/playlists', { token, json: imageDoc(media) });
      if (res.status !== 201) throw new Error(`playlist: ${res.status} ${res.text}`);
      return res.json().id as string;
    };
    const [a, b, alert] = [await playlist(), await playlist(), await playlist()];
    const screens = await insertScreensShowing(services, projectId, a, FLEET);
    const rawScreens = await insertScreensShowing(services, projectId, a, FLEET);

    const fleet = (action: Parameters<typeof runFleetAction>[1]['request']['action']) =>
      runFleetAction(services, {
        tenantId: projectId,
        request: { selector: { ids: screens }, action },
        now: server.clock.now(),
        requestId: 'req_bench',
        generation: 'P',
        clientIp: '127.0.0.1',
      });

    // The raw loop: the rows one assignment writes, per screen in its own transaction.
    const raw = await openRaw(services.config.databaseUrl);
    const rawLoop = (playlistId: string) => raw.assign(rawScreens, projectId, playlistId, server.clock.now());

    const assign: number[] = [];
    const rawAssigns: number[] = [];
    const takeover: number[] = [];
    // CPU time of this process too: on a shared machine wall time swings with the neighbours' load.
    const cpu = { raw: [] as number[], assign: [] as number[], takeover: [] as number[] };
    const cpuOf = { raw: [] as number[], assign: [] as number[], takeover: [] as number[] };
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const target = i % 2 === 0 ? b : a;
      const counted = i >= WARMUP;
      const rawMs = await timed(() => rawLoop(target), cpuOf.raw);
      const assignMs = await timed(() => fleet({ type: 'assign', playlist_id: target }), cpuOf.assign);
      server.clock.advance(61_000); // a fresh budget window
      const takeoverMs = await timed(
        () =>
          fleet({
            type: 'takeover',
            playlist_id: alert,
            until: new Date(server.clock.now() + 3600_000).toISOString(),
            reason: 'bench',
          }),
        cpuOf.takeover,
      );
      if (counted) {
        rawAssigns.push(rawMs);
        assign.push(assignMs);
        takeover.push(takeoverMs);
        for (const k of ['raw', 'assign', 'takeover'] as const) cpu[k].push(cpuOf[k].at(-1)!);
      }
      if (i < WARMUP + ROUNDS - 1) {
        server.clock.advance(61_000);
        await fleet({ type: 'takeover_clear' });
        server.clock.advance(61_000);
      }
    }
    await raw.close();
    const refetch = await timed(() => Promise.all(screens.map((id) => currentManifest(services, id))));
    const reread = await timed(() => Promise.all(screens.map((id) => currentManifest(services, id))));

    const rawP50 = median(rawAssigns);
    const rawCpu = median(cpu.raw);
    const row = (what: string, ms: number, base: number, cpuMs?: number) => ({
      what,
      ms: ms.toFixed(0),
      ratio: ratio(ms, base),
      'cpu ms': cpuMs === undefined ? '' : cpuMs.toFixed(0),
      'cpu ratio': cpuMs === undefined ? '' : ratio(cpuMs, rawCpu),
    });
    table([
      row(`${rawName}, ${FLEET} assignments (p50)`, rawP50, rawP50, rawCpu),
      row(`fleet assign over ${FLEET} screens (p50)`, median(assign), rawP50, median(cpu.assign)),
      row(`fleet takeover over ${FLEET} screens (p50)`, median(takeover), rawP50, median(cpu.takeover)),
      row(`${FLEET} manifests read, already minted`, reread, reread),
      row(`${FLEET} players' refetches after the takeover`, refetch, reread),
    ]);
  } finally {
    await server.stop();
  }
}
