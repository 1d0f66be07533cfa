// Foundation benchmark: GET /api/v1/capabilities (unauthenticated) and an authenticated
// GET /api/v1/project against a bare Express route, all measured in this run. The credit meter's
// cost: GET /api/v1/screens (one handler, "A or P") with an account bearer (Model A, no meter)
// and with a project bearer (Model P, one debit per request).
import os from 'node:os';
import { load, median, startChild, startMarquee, table, type Load } from './harness';

export async function controlPlaneThroughput(): Promise<void> {
  const bare = await startChild('bench/bare-express.ts', { PORT: '18901' }, 'listening');
  const marquee = await startMarquee(18902);
  try {
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
    await load('http://127.0.0.1:18901/bare', { seconds: 1 }); // warm-up
    const targets: { route: string; url: string; headers?: Record<string, string> }[] = [
      { route: 'bare Express GET /bare', url: 'http://127.0.0.1:18901/bare' },
      {
        route: 'GET /api/v1/capabilities',
        url: `${marquee.origin}/api/v1/capabilities`,
        headers: { host: 'localhost:18902' },
      },
      {
        route: 'GET /api/v1/project (bearer)',
        url: `${marquee.origin}/api/v1/project`,
        headers: { host: 'localhost:18902', authorization: `Bearer ${token}` },
      },
      {
        route: 'GET /api/v1/screens (account, unmetered)',
        url: `${marquee.origin}/api/v1/screens`,
        headers: { host: 'localhost:18902', authorization: `Bearer ${account}` },
      },
      {
        route: 'GET /api/v1/screens (project, metered)',
        url: `${marquee.origin}/api/v1/screens`,
        headers: { host: 'localhost:18902', authorization: `Bearer ${token}` },
      },
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
    console.log(
      `credit meter: metered / unmetered GET /api/v1/screens = ${(median(ratios[4]!) / median(ratios[3]!)).toFixed(2)}x`,
    );
  } finally {
    await Promise.all([bare.stop(), marquee.stop()]);
  }
}
