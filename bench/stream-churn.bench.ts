// Stream churn benchmark: event streams opened and dropped by the thousand must not leave memory
// behind (issue 21: after 2,000 streams RSS stayed about 40 MB higher). One Marquee process; the
// client opens tenant and runtime-plane-like event streams in waves of 50, dropping most after the
// first frame and every fifth before the answer, and reads the server's resident memory after a
// warm-up wave and after each further 1,000. Figures are ratios to the warm-up RSS of the same run;
// what is retained per stream is asserted exactly by server/http/stream-retention.test.ts.
import fs from 'node:fs';
import http from 'node:http';
import { ratio, startMarquee, table, type Child } from './harness';

const PORT = 18921;
const WARMUP_STREAMS = 1000;
const STREAMS = 4000;
const WAVE = 50;
const REPORT_EVERY = 1000;

export async function streamChurn(): Promise<void> {
  const server = await startMarquee(PORT);
  try {
    const token = await enroll(server.origin);
    const host = `127.0.0.1:${PORT}`;
    await churn(host, token, WARMUP_STREAMS);
    await settle();
    const warm = rssMiB(server);
    const rows: Record<string, string | number>[] = [
      { streams: `${WARMUP_STREAMS} (warm-up)`, rss_mib: warm.toFixed(1), vs_warm_up: '1.00x' },
    ];
    for (let done = 0; done < STREAMS; done += REPORT_EVERY) {
      await churn(host, token, REPORT_EVERY);
      await settle();
      const rss = rssMiB(server);
      rows.push({
        streams: WARMUP_STREAMS + done + REPORT_EVERY,
        rss_mib: rss.toFixed(1),
        vs_warm_up: ratio(rss, warm),
      });
    }
    table(rows);
    console.log(
      `goal: RSS after ${WARMUP_STREAMS + STREAMS} streams within 1.10x of the warm-up (nothing retained per stream)`,
    );
  } finally {
    await server.stop();
  }
}

async function enroll(origin: string): Promise<string> {
  const res = await fetch(`${origin}/api/v1/enrollments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'bench-stream-churn' },
    body: JSON.stringify({ client_id: `cli_${'c'.repeat(43)}`, email: 'churn@example.com' }),
  });
  if (res.status !== 201) throw new Error(`enrollment failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** Opens `count` streams in waves of WAVE; each is dropped after its first bytes, every fifth sooner. */
async function churn(host: string, token: string, count: number): Promise<void> {
  for (let opened = 0; opened < count; opened += WAVE) {
    await Promise.all(
      Array.from({ length: Math.min(WAVE, count - opened) }, (_, i) => openAndDrop(host, token, i % 5 === 0)),
    );
  }
}

function openAndDrop(host: string, token: string, early: boolean): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: PORT,
        path: '/api/v1/events/stream',
        headers: { host, authorization: `Bearer ${token}` },
        agent: false,
      },
      (res) => {
        res.on('error', () => {});
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      },
    );
    req.on('error', () => resolve());
    req.end();
    if (early) setImmediate(() => (req.destroy(), resolve()));
  });
}

/** Lets the server finish closing what was dropped. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2000));
}

/** Resident memory of a child process (Linux /proc). */
function rssMiB(child: Child): number {
  const status = fs.readFileSync(`/proc/${child.process.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}
