// Foundation benchmark: GET /api/v1/capabilities (unauthenticated) and an authenticated
// GET /api/v1/project against a bare Express route, all measured in this run. The credit meter's
// cost: GET /api/v1/screens (one handler, "A or P") with an account bearer (Model A, no meter)
// and with a project bearer (Model P, one debit per request).
import { load, ratio, startChild, startMarquee, table } from './harness';

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
    const baseline = await load('http://127.0.0.1:18901/bare');
    const capabilities = await load(`${marquee.origin}/api/v1/capabilities`, { headers: { host: 'localhost:18902' } });
    const project = await load(`${marquee.origin}/api/v1/project`, {
      headers: { host: 'localhost:18902', authorization: `Bearer ${token}` },
    });
    const unmetered = await load(`${marquee.origin}/api/v1/screens`, {
      headers: { host: 'localhost:18902', authorization: `Bearer ${account}` },
    });
    const metered = await load(`${marquee.origin}/api/v1/screens`, {
      headers: { host: 'localhost:18902', authorization: `Bearer ${token}` },
    });
    table([
      {
        route: 'bare Express GET /bare',
        'req/s': Math.round(baseline.requestsPerSecond),
        p99_ms: baseline.p99Ms,
        ratio: '1.00x',
        non2xx: baseline.non2xx,
      },
      {
        route: 'GET /api/v1/capabilities',
        'req/s': Math.round(capabilities.requestsPerSecond),
        p99_ms: capabilities.p99Ms,
        ratio: ratio(capabilities.requestsPerSecond, baseline.requestsPerSecond),
        non2xx: capabilities.non2xx,
      },
      {
        route: 'GET /api/v1/project (bearer)',
        'req/s': Math.round(project.requestsPerSecond),
        p99_ms: project.p99Ms,
        ratio: ratio(project.requestsPerSecond, baseline.requestsPerSecond),
        non2xx: project.non2xx,
      },
      {
        route: 'GET /api/v1/screens (account, unmetered)',
        'req/s': Math.round(unmetered.requestsPerSecond),
        p99_ms: unmetered.p99Ms,
        ratio: ratio(unmetered.requestsPerSecond, baseline.requestsPerSecond),
        non2xx: unmetered.non2xx,
      },
      {
        route: 'GET /api/v1/screens (project, metered)',
        'req/s': Math.round(metered.requestsPerSecond),
        p99_ms: metered.p99Ms,
        ratio: ratio(metered.requestsPerSecond, baseline.requestsPerSecond),
        non2xx: metered.non2xx,
      },
    ]);
    console.log(
      `credit meter: metered / unmetered GET /api/v1/screens = ${ratio(metered.requestsPerSecond, unmetered.requestsPerSecond)}`,
    );
  } finally {
    await Promise.all([bare.stop(), marquee.stop()]);
  }
}
