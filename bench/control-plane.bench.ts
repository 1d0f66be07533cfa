// Foundation benchmark: GET /api/v1/capabilities (unauthenticated) and an authenticated
// GET /api/v1/project against a bare Express route, all measured in this run. The credit meter's
// cost: GET /api/v1/screens (one handler, "A or P") with an account bearer (Model A, no meter)
// and with a project bearer (Model P, one debit per request). Each route on SQLite and, when
// Debian's PostgreSQL is installed, on a throwaway PostgreSQL cluster (server/testing/postgres-cluster.sh),
// side by side in the same rounds.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { load, median, startChild, startMarquee, table, type Load } from './harness';

const CLUSTER = path.join(import.meta.dirname, '../server/testing/postgres-cluster.sh');

type Marquee = Awaited<ReturnType<typeof startMarquee>>;

interface Target {
  route: string;
  engine: string;
  url: string;
  headers?: Record<string, string>;
}

/** A project bearer (metered) and an account bearer (unmetered) on this server. */
async function bearers(marquee: Marquee): Promise<{ token: string; account: string }> {
  const enrolled = await fetch(`${marquee.origin}/api/v1/enrollments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'bench-enrollment-1' },
    body: JSON.stringify({ client_id: `cli_${'b'.repeat(43)}`, email: 'bench@example.com' }),
  });
  const { token } = (await enrolled.json()) as { token: string };
  const created = await fetch(`${marquee.origin}/api/v1/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'bench-account-1' },
    body: JSON.stringify({ email: 'bench@example.com' }),
  });
  const account = ((await created.json()) as { token: string }).token;
  return { token, account };
}

async function routesOf(marquee: Marquee, engine: string, port: number): Promise<Target[]> {
  const { token, account } = await bearers(marquee);
  const host = `localhost:${port}`;
  return [
    { route: 'GET /api/v1/capabilities', engine, url: `${marquee.origin}/api/v1/capabilities`, headers: { host } },
    {
      route: 'GET /api/v1/project (bearer)',
      engine,
      url: `${marquee.origin}/api/v1/project`,
      headers: { host, authorization: `Bearer ${token}` },
    },
    {
      route: 'GET /api/v1/screens (account, unmetered)',
      engine,
      url: `${marquee.origin}/api/v1/screens`,
      headers: { host, authorization: `Bearer ${account}` },
    },
    {
      route: 'GET /api/v1/screens (project, metered)',
      engine,
      url: `${marquee.origin}/api/v1/screens`,
      headers: { host, authorization: `Bearer ${token}` },
    },
  ];
}

/** A throwaway PostgreSQL cluster, or undefined (with the reason printed) when none can start here. */
function startPostgres(): { url: string; stop(): void } | undefined {
  const port = String(57000 + Math.floor(Math.random() * 1000));
  try {
    const env = execFileSync(CLUSTER, ['start', port], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const url = /MARQUEE_TEST_DATABASE_URL=(\S+)/.exec(env)![1]!;
    const dir = /MARQUEE_TEST_PG_DIR=(\S+)/.exec(env)![1]!;
    return { url, stop: () => void execFileSync(CLUSTER, ['stop', dir]) };
  } catch (error) {
    console.log(`PostgreSQL: skipped (${String((error as { stderr?: string }).stderr ?? error).trim()})`);
    return undefined;
  }
}

export async function controlPlaneThroughput(): Promise<void> {
  const bare = await startChild('bench/bare-express.ts', { PORT: '18901' }, 'listening');
  const marquee = await startMarquee(18902);
  const cluster = startPostgres();
  const onPostgres = cluster ? await startMarquee(18903, { MARQUEE_DATABASE_URL: cluster.url }) : undefined;
  try {
    await load('http://127.0.0.1:18901/bare', { seconds: 1 }); // warm-up
    const sqliteRoutes = await routesOf(marquee, 'SQLite', 18902);
    const postgresRoutes = onPostgres ? await routesOf(onPostgres, 'PostgreSQL', 18903) : [];
    // Each route on SQLite, then on PostgreSQL, right after one another.
    const targets: Target[] = [
      { route: 'bare Express GET /bare', engine: '-', url: 'http://127.0.0.1:18901/bare' },
      ...sqliteRoutes.flatMap((t, i) => (postgresRoutes[i] ? [t, postgresRoutes[i]!] : [t])),
    ];
    // Rounds of short loads, each route right after its own baseline: on a shared machine the load
    // drifts within seconds, and a ratio is only fair between measurements taken side by side.
    const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
    const results = targets.map(() => [] as Load[]);
    for (let round = 0; round < rounds; round++) {
      for (const [i, t] of targets.entries()) results[i]!.push(await load(t.url, { headers: t.headers, seconds: 2 }));
    }
    const ratios = targets.map((_, i) =>
      results[i]!.map((r, round) => r.requestsPerSecond / results[0]![round]!.requestsPerSecond).sort((a, b) => a - b),
    );
    table(
      targets.map((t, i) => ({
        route: t.route,
        engine: t.engine,
        'req/s': Math.round(median(results[i]!.map((r) => r.requestsPerSecond))),
        p99_ms: median(results[i]!.map((r) => r.p99Ms)),
        ratio: `${median(ratios[i]!).toFixed(2)}x`,
        'ratio range': `${ratios[i]![0]!.toFixed(2)}-${ratios[i]!.at(-1)!.toFixed(2)}`,
        non2xx: results[i]!.reduce((n, r) => n + r.non2xx, 0),
      })),
    );
    console.log(
      `${rounds} rounds of 2 s per route, each round after its own baseline; ratio = median of the rounds' ratios; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const ratioOf = (route: string, engine: string) =>
      median(ratios[targets.findIndex((t) => t.route === route && t.engine === engine)]!);
    for (const engine of onPostgres ? ['SQLite', 'PostgreSQL'] : ['SQLite']) {
      const metered = ratioOf('GET /api/v1/screens (project, metered)', engine);
      const unmetered = ratioOf('GET /api/v1/screens (account, unmetered)', engine);
      console.log(
        `credit meter on ${engine}: metered / unmetered GET /api/v1/screens = ${(metered / unmetered).toFixed(2)}x`,
      );
    }
  } finally {
    await Promise.all([bare.stop(), marquee.stop(), onPostgres?.stop()]);
    cluster?.stop();
  }
}
