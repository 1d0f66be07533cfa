import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MarqueeNetworkError, MarqueeProblem } from '../../sdk/client/problem';
import { AgentDb } from './agent-db';
import { ContentClient } from './content-client';
import { Mirror, type MirrorItem } from './mirror';

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const file = crypto.randomBytes(3 * 1024 * 1024 + 123);
const item: MirrorItem = { sha256: sha(file), bytes: file.length, path: '/content/v1/blob', kind: 'media' };

/** An upstream content route over real HTTP: byte ranges, a credential, and a connection it can cut. */
let server: http.Server;
let origin: string;
const seen: { range?: string; ifRange?: string; authorization?: string }[] = [];
/** Cut the next body after this many bytes (the socket is destroyed: a dropped uplink). */
let cutAfter: number | undefined;
/** Drop the next request that comes on a socket used before, unanswered (its keep-alive ran out as it came). */
let dropReused = false;
const served = new WeakSet<object>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (dropReused && served.has(req.socket)) {
      dropReused = false;
      req.socket.destroy();
      return;
    }
    served.add(req.socket);
    seen.push({
      range: req.headers.range,
      ifRange: String(req.headers['if-range']),
      authorization: req.headers.authorization,
    });
    if (req.headers.authorization !== 'Marquee-Session good') {
      res.writeHead(401, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ status: 401, code: 'unauthorized', detail: 'no session' }));
      return;
    }
    if (req.url !== item.path) {
      res.writeHead(404, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ status: 404, code: 'not_found', detail: 'no such content' }));
      return;
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = m && req.headers['if-range'] === `"${item.sha256}"` ? Number(m[1]) : 0;
    const body = file.subarray(start);
    res.writeHead(m ? 206 : 200, {
      'content-length': body.length,
      ...(m ? { 'content-range': `bytes ${start}-${file.length - 1}/${file.length}` } : {}),
    });
    if (cutAfter === undefined) return void res.end(body);
    const cut = cutAfter;
    cutAfter = undefined;
    res.write(body.subarray(0, cut), () => setTimeout(() => res.socket?.destroy(), 50));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  seen.length = 0;
});

function mirrorOver(client: ContentClient) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-content-'));
  dirs.push(dir);
  return new Mirror(new AgentDb(dir), path.join(dir, 'mirror'), { budgetBytes: 20_000_000, fetch: client.fetch });
}

describe('the content client', () => {
  it('mirrors over HTTP with the session header, and resumes a cut transfer with a byte range', async () => {
    const client = new ContentClient(origin, {
      headers: () => ({ authorization: 'Marquee-Session good' }),
      sockets: 3,
      timeoutMs: 5000,
    });
    const mirror = mirrorOver(client);
    cutAfter = 1024 * 1024;
    await expect(mirror.ensure([item], new Set([item.sha256]))).rejects.toThrow();
    const kept = fs.statSync(`${mirror.filePath(item.sha256)}.part`).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(1024 * 1024);
    // What is kept is the content's beginning: a prefix the next attempt appends to.
    expect(fs.readFileSync(`${mirror.filePath(item.sha256)}.part`).equals(file.subarray(0, kept))).toBe(true);
    await mirror.ensure([item], new Set([item.sha256]));
    expect(seen.at(-1)).toEqual({
      range: `bytes=${kept}-`,
      ifRange: `"${item.sha256}"`,
      authorization: 'Marquee-Session good',
    });
    expect(fs.readFileSync(mirror.filePath(item.sha256)).equals(file)).toBe(true);
    client.close();
  });

  it('throws a refusal as the problem it is (a 401 lets the agent mint a session and ask again)', async () => {
    const client = new ContentClient(origin, { headers: () => ({}), sockets: 1, timeoutMs: 5000 });
    const refused = await client.fetch(item.path, {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MarqueeProblem);
    expect((refused as MarqueeProblem).status).toBe(401);
    expect((refused as MarqueeProblem).code).toBe('unauthorized');
    client.close();
  });

  it('says the upstream is unreachable when nothing answers, and stops when told to', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const nobody = new ContentClient(`http://127.0.0.1:${port}`, { headers: () => ({}), sockets: 1, timeoutMs: 5000 });
    await expect(nobody.fetch('/x', {})).rejects.toBeInstanceOf(MarqueeNetworkError);
    nobody.close();

    const client = new ContentClient(origin, {
      headers: () => ({ authorization: 'Marquee-Session good' }),
      sockets: 1,
      timeoutMs: 5000,
    });
    const stop = new AbortController();
    stop.abort();
    await expect(client.fetch(item.path, { signal: stop.signal })).rejects.toMatchObject({ name: 'AbortError' });
    client.close();
  });

  it('asks again on a new socket when a kept-alive one was closed by the server meanwhile', async () => {
    const client = new ContentClient(origin, {
      headers: () => ({ authorization: 'Marquee-Session good' }),
      sockets: 1,
      timeoutMs: 5000,
    });
    const first = await client.fetch(item.path, {});
    first.body.resume();
    await new Promise((r) => first.body.once('end', r));
    dropReused = true;
    const again = await client.fetch(item.path, {});
    expect(dropReused).toBe(false); // the drop happened, and the request went again
    expect(again.status).toBe(200);
    again.body.destroy();
    client.close();
  });
});
