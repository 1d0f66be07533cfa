// Application upload: validate and publish a ~100 MB, 5,000-file archive through the real server
// (upload, streamed validation, staging, operation, publication), timed against `tar -xzf` of the
// same file in the same run. Also prints the server's peak resident memory: the archive must
// stream, never be held whole.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { Readable } from 'node:stream';
import { declarationOf, tarChunks, uploadHeadersOf, type FixtureEntry } from '../server/applications/archive-fixtures';
import { median, startMarquee, table } from './harness';

const FILES = 5000;
const ROUNDS = 3;
const PORT = 18911;

/** File sizes that sum to about 98 MB: many small assets, some larger media. */
function entries(): FixtureEntry[] {
  const random = crypto.randomBytes(2 * 1024 * 1024);
  const list: FixtureEntry[] = [
    { name: 'index.html', data: '<!doctype html><title>bench</title><script src="js/0.js"></script>' },
  ];
  for (let i = 1; i < FILES; i++) {
    const size = i % 100 === 0 ? 180_000 : 6_000 + ((i * 7919) % 24_000);
    const offset = (i * 104_729) % (random.length - size);
    const dir = ['js', 'css', 'img', 'media/clips', 'fonts'][i % 5];
    list.push({ name: `${dir}/${Math.floor(i / 500)}/${i}.bin`, data: random.subarray(offset, offset + size) });
  }
  return list;
}

/** Median of the timings, in milliseconds. */
function peakRssMb(pid: number): { peak: number; now: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { peak: Math.round(kb('VmHWM') / 1024), now: Math.round(kb('VmRSS') / 1024) };
}

/** One request on its own connection (a pooled one may meet the server's keep-alive timeout mid-reuse). */
function request(
  origin: string,
  method: string,
  pathname: string,
  headers: Record<string, string>,
  body?: string | fs.ReadStream,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(pathname, origin),
      { method, agent: false, headers: { ...headers, host: `localhost:${PORT}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    if (body instanceof fs.ReadStream) body.pipe(req);
    else req.end(body);
  });
}

export async function archiveUpload(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-archive-bench-'));
  const archive = path.join(work, 'app.tar.gz');
  const list = entries();
  await pipeline(Readable.from(tarChunks(list)), zlib.createGzip({ level: 6 }), fs.createWriteStream(archive));
  const body = fs.readFileSync(archive);
  const declaration = declarationOf(list, body);
  const compressedMb = (body.length / 1e6).toFixed(1);
  console.log(
    `archive: ${FILES} files, ${(declaration.expandedBytes / 1e6).toFixed(1)} MB expanded, ${compressedMb} MB compressed`,
  );

  // BENCH_LOG=info shows the server's log while the benchmark runs.
  const marquee = await startMarquee(PORT, { MARQUEE_LOG_LEVEL: process.env.BENCH_LOG ?? 'silent' });
  if (process.env.BENCH_LOG) marquee.process.stdout!.on('data', (d: Buffer) => process.stderr.write(d));
  try {
    const enrolled = await request(
      marquee.origin,
      'POST',
      '/api/v1/enrollments',
      { 'content-type': 'application/json', 'idempotency-key': 'bench-archive-enrollment' },
      JSON.stringify({ client_id: `cli_${'a'.repeat(43)}`, email: 'bench@example.com' }),
    );
    const token = enrolled.body.token as string;
    const idle = peakRssMb(marquee.process.pid!);

    const tarTimes: number[] = [];
    const marqueeTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Flush dirty pages first so neither side pays for the other's writes.
      execFileSync('sync');
      const out = fs.mkdtempSync(path.join(work, 'tar-'));
      let started = performance.now();
      execFileSync('tar', ['-xzf', archive, '-C', out]);
      tarTimes.push(performance.now() - started);

      execFileSync('sync');
      started = performance.now();
      const accepted = await request(
        marquee.origin,
        'POST',
        '/api/v1/applications',
        {
          ...uploadHeadersOf(declaration),
          authorization: `Bearer ${token}`,
          'idempotency-key': `bench-archive-${round}`,
          'content-length': String(body.length),
        },
        fs.createReadStream(archive),
      );
      if (accepted.status !== 202)
        throw new Error(`upload answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
      for (;;) {
        const op = (
          await request(marquee.origin, 'GET', `/api/v1/operations/${accepted.body.operation_id}`, {
            authorization: `Bearer ${token}`,
          })
        ).body;
        if (op.state === 'succeeded') break;
        if (op.state === 'failed' || op.state === 'cancelled')
          throw new Error(`upload ${op.state}: ${JSON.stringify(op.error)}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      marqueeTimes.push(performance.now() - started);
      fs.rmSync(out, { recursive: true, force: true });
    }
    const rss = peakRssMb(marquee.process.pid!);
    const tarMs = median(tarTimes);
    const marqueeMs = median(marqueeTimes);
    table([
      {
        step: 'tar -xzf (baseline)',
        median_ms: Math.round(tarMs),
        runs_ms: tarTimes.map(Math.round).join(' '),
        ratio: '1.00x',
      },
      {
        step: 'upload → validate → publish',
        median_ms: Math.round(marqueeMs),
        runs_ms: marqueeTimes.map(Math.round).join(' '),
        ratio: `${(marqueeMs / tarMs).toFixed(2)}x (goal ≤ 1.50x)`,
      },
    ]);
    console.log(
      `server resident memory: ${idle.now} MB idle, ${rss.peak} MB peak over ${ROUNDS} uploads of a ${compressedMb} MB archive`,
    );
  } finally {
    await marquee.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
