// A test entry: `npm start` with a clock a test sets. The server reads MARQUEE_TEST_CLOCK_AT (an ISO
// instant its clock reads at start; it runs on in real time from there) and answers on a second
// listener, 127.0.0.1:MARQUEE_TEST_CLOCK_PORT only, `PUT /clock {"at": ISO}` to move it: the
// boundary timer then applies what came due and arms for the next boundary as the clock reads it.
// Production never imports this file; e2e/fleet-daypart.spec.ts runs it with a real browser.
import http from 'node:http';
import type { Clock } from '../clock';
import { serve } from '../serve';

class InjectedClock implements Clock {
  private offset = 0;
  constructor(at: string | undefined) {
    if (at !== undefined) this.set(at);
  }
  now(): number {
    return Date.now() + this.offset;
  }
  set(at: string): void {
    const ms = Date.parse(at);
    if (Number.isNaN(ms)) throw new Error(`not an instant: ${at}`);
    this.offset = ms - Date.now();
  }
}

async function main(): Promise<void> {
  const clock = new InjectedClock(process.env.MARQUEE_TEST_CLOCK_AT);
  const server = await serve(process.env, process.argv.slice(2), { clock });
  // Players read the server's time from Date headers (upcoming switches, proof of play): Node writes
  // them from the machine's clock, so each answer's is put on this one before the app sees it.
  server.httpServer?.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.setHeader('Date', new Date(clock.now()).toUTCString());
  });
  const controlPort = Number(process.env.MARQUEE_TEST_CLOCK_PORT);
  if (!Number.isInteger(controlPort) || controlPort <= 0) throw new Error('MARQUEE_TEST_CLOCK_PORT is required');
  const control = http.createServer((req, res) => {
    const answer = () =>
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ now: new Date(clock.now()).toISOString(), offset_ms: clock.now() - Date.now() }));
    if (req.url !== '/clock') return res.writeHead(404).end();
    if (req.method === 'GET') return answer();
    if (req.method !== 'PUT') return res.writeHead(405).end();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      try {
        clock.set((JSON.parse(body) as { at: string }).at);
      } catch (error) {
        res.writeHead(400).end(String(error));
        return;
      }
      server.services.boundaries.wake().then(answer, (error: unknown) => res.writeHead(500).end(String(error)));
    });
  });
  control.listen(controlPort, '127.0.0.1');
}

void main();
