// The client side of the events benchmark, in its own process: opens STREAMS event streams to one
// URL (at most OPEN_CONCURRENCY connecting at once), prints `ready`, then records for every frame
// of type EVENT_TYPE after the first WARMUP the time from its `at` to its arrival, until each
// stream has EVENTS of them or DEADLINE_MS passed since ready. Writes {opened, failed, latenciesMs
// (per measured event), missing} to RESULT_FILE.
import fs from 'node:fs';
import http from 'node:http';

const target = new URL(process.env.TARGET_URL!);
const streamsWanted = Number(process.env.STREAMS);
const eventsWanted = Number(process.env.EVENTS);
const warmup = Number(process.env.WARMUP ?? 0);
const eventType = process.env.EVENT_TYPE!;
const concurrency = Number(process.env.OPEN_CONCURRENCY ?? 100);
const deadlineMs = Number(process.env.DEADLINE_MS ?? 60_000);
const headers: Record<string, string> = { accept: 'text/event-stream' };
if (process.env.TOKEN) headers.authorization = `Bearer ${process.env.TOKEN}`;

/** Per event, in the order each stream received them: the latencies of that event on every stream. */
const latencies: number[][] = Array.from({ length: Math.max(0, eventsWanted - warmup) }, () => []);
const received: number[] = [];
const opened: boolean[] = [];
const sockets: http.ClientRequest[] = [];
let failed = 0;
let complete = 0;
let finish: () => void = () => undefined;
const finished = new Promise<void>((resolve) => (finish = resolve));

function open(index: number): Promise<void> {
  received[index] = 0;
  return new Promise((resolve) => {
    const req = http.request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, headers, agent: false },
      (res) => {
        if (res.statusCode !== 200) {
          failed++;
          res.resume();
          return resolve();
        }
        opened[index] = true;
        res.setEncoding('utf8');
        let pending = '';
        res.on('data', (chunk: string) => {
          const arrived = performance.timeOrigin + performance.now();
          pending += chunk;
          let end: number;
          while ((end = pending.indexOf('\n\n')) !== -1) {
            const block = pending.slice(0, end);
            pending = pending.slice(end + 2);
            const data = block.split('\n').find((line) => line.startsWith('data: '));
            if (!data || !block.includes(`event: ${eventType}\n`)) continue;
            const nth = received[index]!;
            if (nth >= warmup && nth < eventsWanted)
              latencies[nth - warmup]!.push(arrived - Date.parse((JSON.parse(data.slice(6)) as { at: string }).at));
            if (++received[index]! === eventsWanted && ++complete === streamsWanted - failed) finish();
          }
        });
        resolve();
      },
    );
    req.on('error', () => {
      failed++;
      resolve();
    });
    req.end();
    sockets.push(req);
  });
}

let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < streamsWanted) await open(next++);
  }),
);
console.log(`ready ${streamsWanted - failed}`);
await Promise.race([finished, new Promise((r) => setTimeout(r, deadlineMs))]);
const missing = received.reduce((sum, n, i) => sum + (opened[i] ? Math.max(0, eventsWanted - n) : 0), 0);
fs.writeFileSync(
  process.env.RESULT_FILE!,
  JSON.stringify({ opened: streamsWanted - failed, failed, latenciesMs: latencies, missing }),
);
for (const req of sockets) req.destroy();
console.log('done');
process.exit(0);
