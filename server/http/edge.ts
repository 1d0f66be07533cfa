// The connection edge: what happens before a request reaches the app, and to sockets the app no longer
// answers on. Requests Node cannot parse (bad bytes, oversized headers, Transfer-Encoding with
// Content-Length, headers that never finish) get a problem document instead of Node's bare status;
// sockets are bounded in time (headers, keep-alive idle, inactivity, a body left unread after the
// answer) and in number per client address. Event streams are exempt from every bound by design:
// they are answers in progress, and their heartbeats keep the socket from being idle.
import { STATUS_CODES, type default as http } from 'node:http';
import type net from 'node:net';
import { randomToken } from '../keys';
import { problem, retryAfterOf, type ProblemCode, type ProblemError } from '../problem';
import type { Services } from '../services';
import { problemBody } from './problem-response';
import { isTrustedProxySocket } from './client-ip';
import { normalizedAddress } from './trusted-proxies';

/** How long a client has for its request line and headers, from the first byte it could send. */
export const HEADERS_TIMEOUT_MS = 20_000;
/** How often Node checks that deadline (its default, 30 s, let a 60 s deadline run to 90 s). */
export const HEADERS_CHECK_INTERVAL_MS = 2_000;
/** An idle keep-alive connection (between requests) closes after this. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * A socket on which nothing moves in either direction for this long is closed: a client that
 * stopped reading its answer, or a request that neither sends nor is answered. Event streams write
 * a heartbeat every 15 s and bodies have their own 60 s idle rule (body-progress.ts), so neither
 * ever reaches it.
 */
export const SOCKET_IDLE_TIMEOUT_MS = 120_000;
/**
 * Answered before its body arrived (a refusal, an early problem), a request's remaining body is
 * read and discarded so the connection can be reused; it gets this long to finish, then the socket
 * is closed (a client trickling a body nobody reads would otherwise hold it forever).
 */
export const UNREAD_BODY_LINGER_MS = 5_000;

export type EdgeTuning = Services['tuning']['edge'];

export const DEFAULT_EDGE_TUNING: EdgeTuning = {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  headersCheckIntervalMs: HEADERS_CHECK_INTERVAL_MS,
  keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
  socketIdleTimeoutMs: SOCKET_IDLE_TIMEOUT_MS,
  unreadBodyLingerMs: UNREAD_BODY_LINGER_MS,
};

/** A refused socket that does not close its side is destroyed after this. */
const REFUSAL_LINGER_MS = 1_000;

/** The Node HTTP server options the edge needs at construction. */
export function edgeServerOptions(services: Services): http.ServerOptions {
  return {
    connectionsCheckingInterval: services.tuning.edge.headersCheckIntervalMs,
    // A missing Host is answered by the app (with a problem), not by Node's bare 400.
    requireHostHeader: false,
  };
}

/** Sets the server's timeouts and installs the parse-error answer and the per-address cap. */
export function installEdge(server: http.Server, services: Services): void {
  const { edge } = services.tuning;
  server.headersTimeout = edge.headersTimeoutMs;
  // No whole-request deadline (Node's default cuts every body at 300 s, a bare 408): uploads of
  // up to 1 GiB may take hours on a slow uplink. Bodies must keep moving instead (body-progress.ts).
  server.requestTimeout = 0;
  server.keepAliveTimeout = edge.keepAliveTimeoutMs;
  server.timeout = edge.socketIdleTimeoutMs;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: net.Socket) =>
    answerClientError(error, socket, services),
  );
  capConnectionsPerAddress(server, services);
}

/**
 * Called when an answer is complete: a request whose body has not all arrived gets
 * `unreadBodyLingerMs` for the rest (which Node reads and discards), then its socket is closed.
 */
export function closeIfBodyLingers(req: http.IncomingMessage, services: Services): void {
  if (req.complete || req.socket.destroyed) return;
  const timer = setTimeout(() => req.socket.destroy(), services.tuning.edge.unreadBodyLingerMs);
  timer.unref();
  const clear = () => clearTimeout(timer);
  req.once('end', clear);
  req.socket.once('close', clear);
}

/** Node's parser codes (llhttp) and its own timeout, as problem codes. */
function codeOf(error: NodeJS.ErrnoException): ProblemCode {
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'request_header_too_large';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'invalid_request';
}

function detailOf(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'the request line and headers are larger than this server accepts (16 KiB)';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'the request line and headers did not arrive in time';
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return 'the request framing is malformed (Content-Length with Transfer-Encoding, or an invalid length)';
    case 'HPE_INVALID_URL':
      return 'the request target holds characters HTTP does not allow; percent-encode them';
    case 'HPE_INVALID_HEADER_TOKEN':
      return 'a request header name or value holds characters HTTP does not allow';
    default:
      return 'the request could not be parsed as HTTP/1.1';
  }
}

/**
 * The request path of a packet that failed to parse, when it has one (without its query, which may
 * carry tickets); `/` otherwise. The problem renderer escapes and bounds whatever it is.
 */
function instanceOf(error: unknown): string {
  const raw = (error as { rawPacket?: Buffer }).rawPacket;
  if (!Buffer.isBuffer(raw)) return '/';
  const line = raw.subarray(0, 2048).toString('latin1').split('\r\n', 1)[0] ?? '';
  const target = /^[A-Z]{1,20} (\/[^ ?#]*)/.exec(line)?.[1];
  return target ?? '/';
}

function answerClientError(error: NodeJS.ErrnoException, socket: net.Socket, services: Services): void {
  // Mirrors Node's own rule: answer only when no answer of this socket has started.
  const inFlight = (socket as net.Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    const code = codeOf(error);
    const requestId = `req_${randomToken(16)}`;
    services.logger.info(
      { request_id: requestId, parse_error: error.code ?? 'unknown', problem: code },
      'request refused before parsing',
    );
    writeRawProblem(socket, problem(code, detailOf(error)), requestId, instanceOf(error), services);
    return;
  }
  socket.destroy(error);
}

/**
 * Writes a whole HTTP/1.1 problem answer on a socket that has no response object (a request Node
 * could not parse, a refused connection), then closes it: gracefully, or after REFUSAL_LINGER_MS.
 */
function writeRawProblem(
  socket: net.Socket,
  p: ProblemError,
  requestId: string,
  instance: string,
  services: Services,
): void {
  const body = problemBody(p, {
    controlOrigin: services.config.controlOrigin,
    generation: services.config.model,
    requestId,
    instance,
  });
  const status = body.status as number;
  const text = JSON.stringify(body);
  const retryAfter = p.options.retryAfter ?? retryAfterOf(p.code);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(text)}`,
    'Cache-Control: no-store',
    `X-Request-Id: ${requestId}`,
    ...(retryAfter !== undefined ? [`Retry-After: ${retryAfter}`] : []),
    `Date: ${new Date(services.clock.now()).toUTCString()}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${text}`);
  const timer = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** Marks a socket refused by the per-address cap; its requests never reach the app. */
const REFUSED = Symbol('marquee.refused');

/** Whether the per-address cap refused this socket (the app must not answer on it). */
export function wasRefused(socket: net.Socket): boolean {
  return (socket as net.Socket & { [REFUSED]?: true })[REFUSED] === true;
}

/**
 * At most config.maxConnectionsPerIp open connections per socket peer (0: no cap). A trusted proxy
 * (listed, or on the proxy's Unix socket) is exempt: it carries many clients, and per-client
 * budgets read X-Forwarded-For behind it. One over the cap is answered `429 rate_limited` at once
 * and closed.
 */
function capConnectionsPerAddress(server: http.Server, services: Services): void {
  const cap = services.config.maxConnectionsPerIp;
  if (cap === 0) return;
  const open = new Map<string, number>();
  server.prependListener('connection', (socket: net.Socket) => {
    if (isTrustedProxySocket(services, socket)) return;
    const address = normalizedAddress(socket.remoteAddress ?? 'unknown');
    const count = open.get(address) ?? 0;
    if (count >= cap) {
      (socket as net.Socket & { [REFUSED]?: true })[REFUSED] = true;
      writeRawProblem(
        socket,
        problem('rate_limited', `this address already holds ${cap} open connections; close one and retry`),
        `req_${randomToken(16)}`,
        '/',
        services,
      );
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  (server as http.Server & { [COUNTS]?: Map<string, number> })[COUNTS] = open;
}

const COUNTS = Symbol('marquee.connections-by-address');

/** The open connections the cap counts per address on this server (empty when there is no cap). */
export function openConnectionsByAddress(server: http.Server): ReadonlyMap<string, number> {
  return (server as http.Server & { [COUNTS]?: Map<string, number> })[COUNTS] ?? new Map();
}
