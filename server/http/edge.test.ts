// The connection edge (edge.ts) over raw sockets: requests Node cannot parse answer problem documents,
// sockets that trickle or idle are closed within their bounds while event streams stay open, and
// one address holds at most its cap of connections.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';
import { HEADERS_CHECK_INTERVAL_MS, HEADERS_TIMEOUT_MS, openConnectionsByAddress } from './edge';

const EDGE = {
  headersTimeoutMs: 400,
  headersCheckIntervalMs: 50,
  keepAliveTimeoutMs: 300,
  socketIdleTimeoutMs: 700,
  unreadBodyLingerMs: 300,
};
const CAP = 6;

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await TestServer.start({
    config: { maxConnectionsPerIp: CAP },
    tuning: { edge: EDGE, eventStreams: { heartbeatMs: 150 } },
  });
  ({ token } = await server.enroll());
});
afterAll(async () => server.stop());

interface Exchange {
  /** Everything the server sent before it closed (or before `waitMs` ran out). */
  raw: string;
  /** Whether the server closed the connection within `waitMs`. */
  closed: boolean;
  /** Milliseconds from connecting to the close (or to giving up). */
  ms: number;
}

/** Connects, lets `drive` write, and collects what comes back until the server closes or `waitMs` passes. */
function exchange(drive: (socket: net.Socket) => void, waitMs = 3000): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(server.port, '127.0.0.1');
    let raw = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ raw, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (raw += d));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (e) => (done ? undefined : raw === '' ? reject(e) : finish(true)));
    socket.on('connect', () => drive(socket));
  });
}

function parse(raw: string) {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).split('\r\n');
  const status = Number(head[0]!.split(' ')[1]);
  const headers = Object.fromEntries(
    head.slice(1).map((line) => {
      const i = line.indexOf(':');
      return [line.slice(0, i).toLowerCase(), line.slice(i + 1).trim()];
    }),
  );
  return { status, headers, body: raw.slice(split + 4) };
}

function expectProblem(raw: string, status: number, code: string) {
  const answer = parse(raw);
  expect(answer.status, raw).toBe(status);
  expect(answer.headers['content-type']).toBe('application/problem+json');
  expect(answer.headers.connection).toBe('close');
  const body = JSON.parse(answer.body);
  expect(body).toMatchObject({ status, code, type: `${server.origin}/problems/${code.replace(/_/g, '-')}` });
  expect(body.request_id).toMatch(/^req_/);
  expect(answer.headers['x-request-id']).toBe(body.request_id);
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body, 'latin1'));
  return body;
}

const send = (text: string) => exchange((s) => s.write(Buffer.from(text, 'latin1')));

describe('requests Node cannot parse', () => {
  it('answers bad bytes in the path with invalid_request, escaping them in the problem', async () => {
    const { raw, closed } = await send(
      `GET /api/v1/scr\x01eens?ticket=secret HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`,
    );
    expect(closed).toBe(true);
    const body = expectProblem(raw, 400, 'invalid_request');
    expect(body.instance).not.toContain('\x01');
    expect(raw).not.toContain('secret');
  });

  it('answers Transfer-Encoding together with Content-Length with invalid_request', async () => {
    const { raw } = await send(
      `POST /api/v1/enrollments HTTP/1.1\r\nHost: ${server.host}\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`,
    );
    expectProblem(raw, 400, 'invalid_request');
  });

  it('answers oversized headers with 431 request_header_too_large', async () => {
    const { raw } = await send(`GET / HTTP/1.1\r\nHost: ${server.host}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectProblem(raw, 431, 'request_header_too_large');
  });

  it('answers a malformed request line and a bad header name with invalid_request', async () => {
    expectProblem((await send('HELLO THERE\r\n\r\n')).raw, 400, 'invalid_request');
    expectProblem((await send(`GET /a b HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`)).raw, 400, 'invalid_request');
    expectProblem((await send(`GET / HTTP/1.1\r\nHo st: x\r\n\r\n`)).raw, 400, 'invalid_request');
  });

  it('answers an HTTP/1.1 request without Host with invalid_request, through the app (request log included)', async () => {
    const { raw } = await send('GET /api/v1/capabilities HTTP/1.1\r\n\r\n');
    const body = expectProblem(raw, 400, 'invalid_request');
    expect(body.detail).toContain('Host');
    expect(body.instance).toBe('/api/v1/capabilities');
  });

  it('answers a target that is no URL with a problem and stays up: an absolute form, a path that looks like a host', async () => {
    const absolute = await send(`GET http://[/api/v1/screens HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`);
    expectProblem(absolute.raw, 400, 'invalid_request');
    // "//[" matches a release host's wildcard route; a URL parser reads it as a host and throws.
    const releaseHost = `abc.release.localhost:${server.port}`;
    const path = await send(`GET //[ HTTP/1.1\r\nHost: ${releaseHost}\r\nConnection: close\r\n\r\n`);
    expect(parse(path.raw).status).toBe(403); // no such release
    expect(JSON.parse(parse(path.raw).body).instance).toBe('//[');
    const health = await send(`GET /.health HTTP/1.1\r\nHost: ${server.host}\r\nConnection: close\r\n\r\n`);
    expect(parse(health.raw).status).toBe(200);
  });

  it('still serves HTTP/1.0 without Host', async () => {
    const { raw } = await send('GET /.health HTTP/1.0\r\n\r\n');
    expect(parse(raw).status).toBe(200);
  });
});

describe('connection timeouts', () => {
  it('lowers the defaults: 20 s for headers, checked every 2 s, and bounds an idle socket', () => {
    expect(HEADERS_TIMEOUT_MS).toBe(20_000);
    expect(HEADERS_CHECK_INTERVAL_MS).toBe(2_000);
    const http = server.server.httpServer!;
    expect(http.headersTimeout).toBe(EDGE.headersTimeoutMs);
    expect(http.keepAliveTimeout).toBe(EDGE.keepAliveTimeoutMs);
    expect(http.requestTimeout).toBe(0);
    expect(http.timeout).toBe(EDGE.socketIdleTimeoutMs);
  });

  it('closes a client that trickles its headers, with a request_timeout problem', async () => {
    const { raw, closed, ms } = await exchange((s) => {
      s.write(`GET /api/v1/capabilities HTTP/1.1\r\nHost: ${server.host}\r\n`);
      const drip = setInterval(() => s.writable && s.write('X-Drip: 1\r\n'), 50);
      s.on('close', () => clearInterval(drip));
    });
    expect(closed).toBe(true);
    expect(ms).toBeLessThan(EDGE.headersTimeoutMs + 500);
    expectProblem(raw, 408, 'request_timeout');
  });

  it('closes a connection that sends nothing', async () => {
    const { closed, ms } = await exchange(() => {});
    expect(closed).toBe(true);
    expect(ms).toBeLessThan(EDGE.headersTimeoutMs + 500);
  });

  it('closes a client that trickles a body nobody reads after its answer', async () => {
    const { raw, closed, ms } = await exchange((s) => {
      // Refused before its body is read (no credential), then the body drips on.
      s.write(
        `PATCH /api/v1/project HTTP/1.1\r\nHost: ${server.host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      );
      const drip = setInterval(() => s.writable && s.write(' '), 50);
      s.on('close', () => clearInterval(drip));
    });
    expect(parse(raw).status).toBe(401);
    expect(closed).toBe(true);
    expect(ms).toBeLessThan(EDGE.unreadBodyLingerMs + 700);
  });

  it('keeps the connection of an answered request whose body then completes', async () => {
    const { raw, closed } = await exchange((s) => {
      s.write(`PATCH /api/v1/project HTTP/1.1\r\nHost: ${server.host}\r\nContent-Length: 4\r\n\r\n{`);
      setTimeout(() => {
        s.write('  }');
        setTimeout(() => s.write(`GET /.health HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`), 50);
      }, 100);
    }, 2500);
    expect(raw.match(/HTTP\/1.1 /g)).toHaveLength(2);
    expect(raw).toContain('HTTP/1.1 200');
    expect(closed).toBe(true); // by keep-alive, after the second answer
  });

  it('closes an idle keep-alive connection', async () => {
    const { raw, closed, ms } = await send(`GET /.health HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`);
    expect(parse(raw).status).toBe(200);
    expect(closed).toBe(true);
    // Node waits a second past keepAliveTimeout (its buffer for clients' own idle timers).
    expect(ms).toBeLessThan(EDGE.keepAliveTimeoutMs + 1500);
  });

  it('keeps an event stream open well past every bound', async () => {
    const waitMs = EDGE.socketIdleTimeoutMs + EDGE.headersTimeoutMs + 600;
    const { raw, closed } = await exchange(
      (s) =>
        s.write(`GET /api/v1/events/stream HTTP/1.1\r\nHost: ${server.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`),
      waitMs,
    );
    expect(closed).toBe(false);
    expect(raw).toContain('HTTP/1.1 200');
    expect(raw).toContain('text/event-stream');
    expect(raw.match(/: keep-alive/g)!.length).toBeGreaterThanOrEqual(3);
  });
});

describe('connections per client address', () => {
  it('refuses one over the cap with 429 rate_limited and closes it; a freed slot is usable again', async () => {
    const held: net.Socket[] = [];
    try {
      for (let i = 0; i < CAP; i++) {
        const s = net.connect(server.port, '127.0.0.1');
        await new Promise((r) => s.once('connect', r));
        s.on('error', () => {});
        // Keep each one busy past the headers deadline: an event stream.
        s.write(`GET /api/v1/events/stream HTTP/1.1\r\nHost: ${server.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
        held.push(s);
      }
      await new Promise((r) => setTimeout(r, 100));
      expect(openConnectionsByAddress(server.server.httpServer!).get('127.0.0.1')).toBe(CAP);
      const over = await send(`GET /.health HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`);
      expect(over.closed).toBe(true);
      const body = expectProblem(over.raw, 429, 'rate_limited');
      expect(body.detail).toContain(String(CAP));
      expect(parse(over.raw).headers['retry-after']).toBe('1');

      held.pop()!.destroy();
      await new Promise((r) => setTimeout(r, 100));
      const again = await send(`GET /.health HTTP/1.1\r\nHost: ${server.host}\r\nConnection: close\r\n\r\n`);
      expect(parse(again.raw).status).toBe(200);
    } finally {
      for (const s of held) s.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(openConnectionsByAddress(server.server.httpServer!).get('127.0.0.1')).toBeUndefined();
  });
});

describe('connections from a trusted proxy', () => {
  it('are not capped: the proxy carries many clients', async () => {
    const behindProxy = await TestServer.start({ config: { maxConnectionsPerIp: 2, trustedProxies: ['127.0.0.1'] } });
    const held: net.Socket[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const s = net.connect(behindProxy.port, '127.0.0.1');
        s.on('error', () => {});
        await new Promise((r) => s.once('connect', r));
        held.push(s);
      }
      const answers = await Promise.all(
        held.map(
          (s) =>
            new Promise<string>((resolve) => {
              let raw = '';
              s.setEncoding('latin1');
              s.on('data', (d: string) => {
                raw += d;
                if (raw.includes('\r\n\r\n')) resolve(raw);
              });
              s.write(`GET /.health HTTP/1.1\r\nHost: ${behindProxy.host}\r\n\r\n`);
            }),
        ),
      );
      expect(answers.map((raw) => parse(raw).status)).toEqual([200, 200, 200, 200]);
      expect(openConnectionsByAddress(behindProxy.server.httpServer!).size).toBe(0);
    } finally {
      for (const s of held) s.destroy();
      await behindProxy.stop();
    }
  });
});
