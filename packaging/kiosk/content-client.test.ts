import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MarqueeNetworkError, MarqueeProblem } from '../../sdk/client/problem';
import { AgentDb } from './agent-db';
import { ContentClient, pooledChunks } from './content-client';
import type { HashStream } from './file-hash';
import { IntegrityError, Mirror, type MirrorItem } from './mirror';

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

function scratchDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-content-'));
  dirs.push(dir);
  return dir;
}
const scratchFile = () => path.join(scratchDir(), 'body');

function mirrorOver(client: ContentClient) {
  const dir = scratchDir();
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
    await first.saveTo(scratchFile(), 'w');
    dropReused = true;
    const again = await client.fetch(item.path, {});
    expect(dropReused).toBe(false); // the drop happened, and the request went again
    expect(again.status).toBe(200);
    again.discard();
    // Its one connection went with the unread body: the next download is not left waiting for it.
    const after = scratchFile();
    await (await client.fetch(item.path, {})).saveTo(after, 'w');
    expect(fs.readFileSync(after).equals(file)).toBe(true);
    client.close();
  });
});

/** A loopback server that answers each request's head with whatever `answer` writes on the raw socket. */
async function rawServer(
  answer: (socket: net.Socket, head: string) => void,
): Promise<{ origin: string; close: () => Promise<void>; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    let pending = '';
    socket.on('data', (d: Buffer) => {
      pending += d.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        answer(socket, head);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Starts `server` on a loopback port: its origin, and how to close it (with its connections). */
async function onLoopback(
  server: http.Server,
  scheme = 'http',
): Promise<{ origin: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `${scheme}://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A server that answers every request with all of `body` at once; `unsent()`: bytes of it still waiting at the server. */
async function flooding(body: Buffer) {
  let last: http.ServerResponse | undefined;
  const served = await onLoopback(
    http.createServer((_req, res) => {
      last = res;
      res.writeHead(200, { 'content-length': body.length });
      res.end(body);
    }),
  );
  return { ...served, unsent: () => last?.socket?.writableLength ?? 0 };
}

const plainClient = (at: string, more: Partial<ConstructorParameters<typeof ContentClient>[1]> = {}) =>
  new ContentClient(at, {
    headers: () => ({ authorization: 'Marquee-Session good' }),
    sockets: 1,
    timeoutMs: 5000,
    ...more,
  });

describe('the content client on the wire', () => {
  it('keeps one connection for downloads one after another', async () => {
    let connections = 0;
    const count = () => connections++;
    server.on('connection', count);
    const client = plainClient(origin);
    try {
      for (let i = 0; i < 3; i++) {
        const target = scratchFile();
        await (await client.fetch(item.path, {})).saveTo(target, 'w');
        expect(fs.readFileSync(target).equals(file)).toBe(true);
      }
      expect(connections).toBe(1);
    } finally {
      server.off('connection', count);
      client.close();
    }
  });

  it('writes a chunked body, and one sent until the server closes the connection', async () => {
    const body = crypto.randomBytes(2 * 1024 * 1024 + 7);
    const chunked = await onLoopback(
      http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write(body.subarray(0, 1000));
        setTimeout(() => {
          res.write(body.subarray(1000, 1_500_000));
          res.end(body.subarray(1_500_000));
        }, 20);
      }),
    );
    const untilClose = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n');
      socket.end(body);
    });
    const a = plainClient(chunked.origin);
    const b = plainClient(untilClose.origin);
    try {
      const viaChunks = await a.fetch('/x', {});
      expect(viaChunks.headers['transfer-encoding']).toBe('chunked');
      const first = scratchFile();
      await viaChunks.saveTo(first, 'w');
      expect(fs.readFileSync(first).equals(body)).toBe(true);
      const second = scratchFile();
      await (await b.fetch('/x', {})).saveTo(second, 'w');
      expect(fs.readFileSync(second).equals(body)).toBe(true);
      // That connection could not carry another answer: the next request opens a new one.
      await (await b.fetch('/x', {})).saveTo(scratchFile(), 'w');
      expect(untilClose.connections()).toBe(2);
    } finally {
      a.close();
      b.close();
      await chunked.close();
      await untilClose.close();
    }
  });

  it('holds a body that arrives before it is given a file, without losing a byte', async () => {
    const big = crypto.randomBytes(24 * 1024 * 1024);
    const upstream = await flooding(big);
    const client = plainClient(upstream.origin);
    try {
      const response = await client.fetch('/big', {});
      // Far more than the client buffers arrives meanwhile: it stops reading, then goes on.
      await new Promise((r) => setTimeout(r, 300));
      // The client holds a few chunks and the kernel's socket buffers some more; the rest waits.
      expect(upstream.unsent()).toBeGreaterThan(4 * 1024 * 1024);
      const target = scratchFile();
      await response.saveTo(target, 'w');
      expect(fs.readFileSync(target).equals(big)).toBe(true);
    } finally {
      client.close();
      await upstream.close();
    }
  });

  it('gives the chunks of a body discarded while it arrives back to the pool', async () => {
    const upstream = await flooding(crypto.randomBytes(24 * 1024 * 1024));
    const client = plainClient(upstream.origin);
    try {
      const response = await client.fetch('/big', {});
      await new Promise((r) => setTimeout(r, 300)); // chunks fill, and the client stops reading
      const idle = pooledChunks();
      response.discard();
      expect(pooledChunks()).toBeGreaterThan(idle);
    } finally {
      client.close();
      await upstream.close();
    }
  });

  it('stops reading while the hash is behind, and goes on once it catches up', async () => {
    const big = crypto.randomBytes(24 * 1024 * 1024);
    const upstream = await flooding(big);
    const client = plainClient(upstream.origin);
    // A hash that keeps every chunk it is given until told to give them back.
    const held: (() => void)[] = [];
    let given = 0;
    const digest = crypto.createHash('sha256');
    const hash: HashStream = {
      give: (chunk, length, returned) => {
        given++;
        digest.update(chunk.subarray(0, length));
        held.push(() => returned(chunk));
      },
      digest: async () => digest.digest('hex'),
      drop: () => undefined,
    };
    try {
      const target = scratchFile();
      const saving = (await client.fetch('/big', {})).saveTo(target, 'w', hash);
      await new Promise((r) => setTimeout(r, 300));
      // Four chunks in the hash, and what was read already (three queued, one filling): no more.
      expect(given).toBeGreaterThanOrEqual(4);
      expect(given).toBeLessThanOrEqual(8);
      expect(fs.statSync(target).size).toBeLessThanOrEqual(8 * 1024 * 1024);
      const catchUp = setInterval(() => {
        for (const back of held.splice(0)) back();
      }, 5);
      await saving;
      clearInterval(catchUp);
      expect(fs.readFileSync(target).equals(big)).toBe(true);
      expect(await hash.digest()).toBe(sha(big));
      expect(given).toBe(24);
    } finally {
      client.close();
      await upstream.close();
    }
  });

  it('passes over an informational answer, and refuses a head too large to be one', async () => {
    const early = await rawServer((socket, head) => {
      if (head.startsWith('GET /endless ')) {
        // A head that never ends, sent a piece at a time.
        socket.write('HTTP/1.1 200 OK\r\n');
        const more = setInterval(() => socket.destroyed || socket.write(`x-more: ${'b'.repeat(8000)}\r\n`), 5);
        socket.once('close', () => clearInterval(more));
        return;
      }
      if (head.startsWith('GET /huge ')) {
        socket.write(`HTTP/1.1 200 OK\r\nx-padding: ${'a'.repeat(70 * 1024)}\r\ncontent-length: 2\r\n\r\nok`);
        return;
      }
      socket.write('HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n');
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\netag: "v1"\r\n\r\nhello');
    });
    const client = plainClient(early.origin);
    try {
      const response = await client.fetch('/hinted', {});
      expect(response.status).toBe(200);
      expect(response.headers.etag).toBe('"v1"');
      const target = scratchFile();
      await response.saveTo(target, 'w');
      expect(fs.readFileSync(target, 'utf8')).toBe('hello');
      const huge = await client.fetch('/huge', {}).catch((e: unknown) => e);
      expect(huge).toBeInstanceOf(MarqueeNetworkError);
      expect(String((huge as Error).message)).toContain('head is larger');
      const endless = await client.fetch('/endless', {}).catch((e: unknown) => e);
      expect(endless).toBeInstanceOf(MarqueeNetworkError);
      expect(String((endless as Error).message)).toContain('head is larger');
    } finally {
      client.close();
      await early.close();
    }
  });

  it('never sends a header or path that would end a line early', async () => {
    const requests: string[] = [];
    const listening = await rawServer((socket, head) => {
      requests.push(head);
      socket.write('HTTP/1.1 204 No Content\r\n\r\n');
    });
    const forged = new ContentClient(listening.origin, {
      headers: () => ({ authorization: 'Marquee-Session good\r\nx-injected: 1' }),
      sockets: 1,
      timeoutMs: 5000,
    });
    const client = plainClient(listening.origin);
    try {
      await expect(forged.fetch('/x', {})).rejects.toThrow(/header authorization cannot be sent/);
      await expect(client.fetch('/x HTTP/1.1\r\nx-injected: 1\r\n', {})).rejects.toThrow(/absolute path/);
      const fine = await client.fetch('/x', {});
      expect(fine.status).toBe(204);
      await fine.saveTo(scratchFile(), 'w');
      expect(requests).toHaveLength(1);
      expect(requests[0]).not.toContain('x-injected');
    } finally {
      forged.close();
      client.close();
      await listening.close();
    }
  });

  it('cuts a body that stops sending, and one whose download is called off, keeping what arrived', async () => {
    const start = crypto.randomBytes(200 * 1024);
    const stalling = await onLoopback(
      http.createServer((req, res) => {
        res.writeHead(200, { 'content-length': start.length * 10 });
        if (req.url === '/quiet') res.flushHeaders();
        else res.write(start);
      }),
    );
    const client = plainClient(stalling.origin, { timeoutMs: 300 });
    try {
      const stalled = scratchFile();
      await expect((await client.fetch('/x', {})).saveTo(stalled, 'w')).rejects.toThrow(
        /no bytes from upstream for 300 ms/,
      );
      expect(fs.readFileSync(stalled).equals(start)).toBe(true);

      const stop = new AbortController();
      const response = await client.fetch('/x', { signal: stop.signal });
      const target = scratchFile();
      const saving = response.saveTo(target, 'w');
      setTimeout(() => stop.abort(), 50);
      await expect(saving).rejects.toMatchObject({ name: 'AbortError' });
      expect(start.subarray(0, fs.statSync(target).size).equals(fs.readFileSync(target))).toBe(true);

      // A body left unread gives up its connection at once, not when it next sends or times out.
      const patient = plainClient(stalling.origin, { timeoutMs: 10_000 });
      try {
        (await patient.fetch('/quiet', {})).discard();
        const next = await Promise.race([
          patient.fetch('/quiet', {}),
          new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 1000)),
        ]);
        expect(next).not.toBe('waiting');
        if (next !== 'waiting') next.discard();
      } finally {
        patient.close();
      }
    } finally {
      client.close();
      await stalling.close();
    }
  });

  it('stops a body that runs past the content asked for: nothing past its size is written, nothing lands', async () => {
    // A captive portal or a broken proxy answering 200 with a stream that does not end.
    let sent = 0;
    const endless = await onLoopback(
      http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = crypto.randomBytes(1024 * 1024);
        const more = () => {
          while (sent < 64 * 1024 * 1024 && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
      }),
    );
    const client = plainClient(endless.origin);
    const mirror = mirrorOver(client);
    try {
      const small: MirrorItem = { sha256: sha(file), bytes: 1024 * 1024, path: '/endless', kind: 'media' };
      await expect(mirror.ensure([small], new Set([small.sha256]))).rejects.toBeInstanceOf(IntegrityError);
      expect(sent).toBeLessThan(16 * 1024 * 1024);
      expect(fs.existsSync(`${mirror.filePath(small.sha256)}.part`)).toBe(false);
    } finally {
      client.close();
      await endless.close();
    }
  });

  it('downloads over https from a server its CA vouches for, and refuses one it does not', async () => {
    const fixtures = path.join(import.meta.dirname, 'fixtures');
    const secure = await onLoopback(
      https.createServer(
        {
          key: fs.readFileSync(path.join(fixtures, 'loopback-test.key')),
          cert: fs.readFileSync(path.join(fixtures, 'loopback-test.crt')),
        },
        (_req, res) => {
          res.writeHead(200, { 'content-length': file.length });
          res.end(file);
        },
      ),
      'https',
    );
    const trusting = plainClient(secure.origin, { ca: fs.readFileSync(path.join(fixtures, 'loopback-test.crt')) });
    const doubting = plainClient(secure.origin);
    try {
      const target = scratchFile();
      await (await trusting.fetch('/x', {})).saveTo(target, 'w');
      expect(fs.readFileSync(target).equals(file)).toBe(true);
      await expect(doubting.fetch('/x', {})).rejects.toBeInstanceOf(MarqueeNetworkError);
    } finally {
      trusting.close();
      doubting.close();
      await secure.close();
    }
  });
});
