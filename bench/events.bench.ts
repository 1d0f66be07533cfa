// Events benchmark: 5,000 concurrent event streams on one Marquee process. Each appended event
// (a PATCH /api/v1/project, which appends project.updated in its transaction) fans out to every
// stream; the client process measures, per stream and event, the time from the event's `at` (the
// request's arrival, just before its commit) to the frame's arrival, and this process reads the
// server's resident memory. Baseline in the same run: the same fan-out from a bare Node SSE server.
// BENCH_VERBOSE=1 also prints the figures of each event.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ratio, startChild, startMarquee, table, type Child } from './harness';

const STREAMS_WANTED = 5000;
const EVENTS = 20;
/** Events appended first and left out of the figures: they measure the JIT warming up, not delivery. */
const WARMUP_EVENTS = 3;
/** Pause between appends, longer than one fan-out takes, so figures are per event and not queueing. */
const APPEND_EVERY_MS = 400;
/** File descriptors a process needs besides its stream sockets (stdio, database, listeners, tsx). */
const FD_SPARE = 200;
const MARQUEE_PORT = 18911;
const BARE_PORT = 18912;

interface Outcome {
  opened: number;
  failed: number;
  missing: number;
  p50: number;
  p99: number;
  max: number;
  rssIdleMiB: number;
  rssOpenMiB: number;
}

export async function eventFanOut(): Promise<void> {
  const { soft, hard } = fdLimits();
  // The server and the client process each hold one socket per stream.
  const streams = Math.max(1, Math.min(STREAMS_WANTED, hard - FD_SPARE));
  if (streams < STREAMS_WANTED) {
    console.log(`note: open-file hard limit is ${hard}; running ${streams} streams instead of ${STREAMS_WANTED}`);
  }
  const fdLimit = soft < streams + FD_SPARE ? Math.min(hard, streams + FD_SPARE) : undefined;
  if (fdLimit) console.log(`note: raising the children's open-file limit from ${soft} to ${fdLimit}`);

  const bare = await measureBare(streams, fdLimit);
  const marquee = await measureMarquee(streams, fdLimit);

  const perStreamKiB = (o: Outcome) => ((o.rssOpenMiB - o.rssIdleMiB) * 1024) / o.opened;
  console.log(
    `${streams} streams × ${EVENTS} events (after ${WARMUP_EVENTS} warm-up events), one every ${APPEND_EVERY_MS} ms; ` +
      'latency = the event’s time (its request’s arrival, just before the commit) → the frame’s arrival at the client, in ms',
  );
  table(
    [
      ['bare Node SSE fan-out', bare],
      ['Marquee /api/v1/events/stream', marquee],
    ].map(([name, o]) => {
      const outcome = o as Outcome;
      return {
        server: name as string,
        streams: outcome.opened,
        failed: outcome.failed,
        missing: outcome.missing,
        p50_ms: outcome.p50.toFixed(1),
        p99_ms: outcome.p99.toFixed(1),
        max_ms: outcome.max.toFixed(1),
        rss_idle_MiB: outcome.rssIdleMiB.toFixed(0),
        rss_streams_MiB: outcome.rssOpenMiB.toFixed(0),
        KiB_per_stream: perStreamKiB(outcome).toFixed(1),
      };
    }),
  );
  table([
    {
      'Marquee ÷ bare': 'ratio',
      p50: ratio(marquee.p50, bare.p50),
      p99: ratio(marquee.p99, bare.p99),
      rss_with_streams: ratio(marquee.rssOpenMiB, bare.rssOpenMiB),
      per_stream_memory: ratio(perStreamKiB(marquee), perStreamKiB(bare)),
    },
  ]);
}

async function measureBare(streams: number, fdLimit: number | undefined): Promise<Outcome> {
  const server = await startChild('bench/bare-sse.ts', { PORT: String(BARE_PORT) }, 'listening', { fdLimit });
  try {
    const origin = `http://127.0.0.1:${BARE_PORT}`;
    return await fanOut(
      server,
      streams,
      fdLimit,
      { url: `${origin}/stream`, eventType: 'bench.published' },
      async () => {
        await fetch(`${origin}/publish`, { method: 'POST' });
      },
    );
  } finally {
    await server.stop();
  }
}

async function measureMarquee(streams: number, fdLimit: number | undefined): Promise<Outcome> {
  const server = await startMarquee(MARQUEE_PORT, {}, { fdLimit });
  try {
    const origin = server.origin;
    const enrolled = await fetch(`${origin}/api/v1/enrollments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'bench-events-enrollment' },
      body: JSON.stringify({ client_id: `cli_${'e'.repeat(43)}`, email: 'bench@example.com' }),
    });
    const { token } = (await enrolled.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}` };
    // Start every stream at the head, so the figures are live delivery, not replay.
    const head = ((await (await fetch(`${origin}/api/v1/events`, { headers: auth })).json()) as { next_cursor: string })
      .next_cursor;
    let n = 0;
    return await fanOut(
      server,
      streams,
      fdLimit,
      { url: `${origin}/api/v1/events/stream?after=${head}`, eventType: 'project.updated', token },
      async () => {
        const res = await fetch(`${origin}/api/v1/project`, {
          method: 'PATCH',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Bench ${++n}` }),
        });
        if (res.status !== 200) throw new Error(`PATCH /api/v1/project answered ${res.status}: ${await res.text()}`);
      },
    );
  } finally {
    await server.stop();
  }
}

async function fanOut(
  server: Child,
  streams: number,
  fdLimit: number | undefined,
  target: { url: string; eventType: string; token?: string },
  append: () => Promise<void>,
): Promise<Outcome> {
  const rssIdleMiB = rssMiB(server);
  const resultFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-bench-events-')), 'result.json');
  const client = await startChild(
    'bench/events-fanout-client.ts',
    {
      TARGET_URL: target.url,
      TOKEN: target.token ?? '',
      STREAMS: String(streams),
      EVENTS: String(WARMUP_EVENTS + EVENTS),
      WARMUP: String(WARMUP_EVENTS),
      EVENT_TYPE: target.eventType,
      RESULT_FILE: resultFile,
    },
    'ready',
    { fdLimit },
  );
  const exited = new Promise<void>((resolve) => client.process.once('exit', () => resolve()));
  await new Promise((r) => setTimeout(r, 500)); // let the last streams settle before reading memory
  const rssOpenMiB = rssMiB(server);
  for (let i = 0; i < WARMUP_EVENTS + EVENTS; i++) {
    await append();
    await new Promise((r) => setTimeout(r, APPEND_EVERY_MS));
  }
  await exited;
  const result = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as {
    opened: number;
    failed: number;
    latenciesMs: number[][];
    missing: number;
  };
  if (process.env.BENCH_VERBOSE) {
    for (const [i, l] of result.latenciesMs.entries()) {
      const s = [...l].sort((a, b) => a - b);
      console.log(
        `event ${i}: n=${s.length} p50=${s[Math.floor(s.length / 2)]?.toFixed(1)} p99=${s[Math.floor(s.length * 0.99)]?.toFixed(1)} max=${s.at(-1)?.toFixed(1)}`,
      );
    }
  }
  fs.rmSync(path.dirname(resultFile), { recursive: true, force: true });
  const sorted = result.latenciesMs.flat().sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return {
    opened: result.opened,
    failed: result.failed,
    missing: result.missing,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.at(-1) ?? NaN,
    rssIdleMiB,
    rssOpenMiB,
  };
}

/** Resident memory of a child process (Linux /proc). */
function rssMiB(child: Child): number {
  const status = fs.readFileSync(`/proc/${child.process.pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  return kib / 1024;
}

function fdLimits(): { soft: number; hard: number } {
  const [soft, hard] = execFileSync('/bin/sh', ['-c', 'ulimit -Sn; ulimit -Hn'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((v) => (v === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(v)));
  return { soft: soft!, hard: hard! };
}
