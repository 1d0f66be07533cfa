// The mirror's downloads from upstream's content routes, over node:http(s) rather than fetch: the
// body arrives as a Node stream that pipes into the file with no web-stream adapter per chunk
// (fetch's web-stream body cost more CPU per byte), on a keep-alive pool of one socket per
// concurrent download. Anything but a 2xx answer is thrown as a MarqueeProblem (a 401 lets the
// caller mint a session and ask again); no answer at all is a MarqueeNetworkError.
import http from 'node:http';
import https from 'node:https';
import { MarqueeNetworkError, type MarqueeProblem } from '../../sdk/client/problem';
import { problemOf } from '../../sdk/client/transport';
import type { ContentFetch, ContentResponse } from './mirror';

/** A problem body is read up to this much (a content route never sends more for an error). */
const PROBLEM_MAX_BYTES = 64 * 1024;

export interface ContentClientOptions {
  /** The credential headers of the moment (read for each request). */
  headers: () => Record<string, string>;
  /** Sockets kept open to upstream: one per concurrent download. */
  sockets: number;
  /** Until the answer's headers; a body that sends nothing for this long is cut too. */
  timeoutMs: number;
}

export class ContentClient {
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;

  constructor(
    readonly origin: string,
    private readonly options: ContentClientOptions,
  ) {
    const secure = new URL(origin).protocol === 'https:';
    const settings = { keepAlive: true, maxSockets: options.sockets, maxFreeSockets: options.sockets };
    this.agent = secure ? new https.Agent(settings) : new http.Agent(settings);
    this.request = secure ? https.request : http.request;
  }

  /** The ContentFetch the mirror calls. */
  readonly fetch: ContentFetch = async (path, options) => {
    const headers: Record<string, string> = { ...this.options.headers(), accept: '*/*' };
    if (options.range !== undefined) headers.range = options.range;
    if (options.ifRange !== undefined) headers['if-range'] = options.ifRange;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(path, headers, options.signal);
      } catch (error) {
        // A kept-alive socket the server had just closed: the request never reached it; once more.
        if (error instanceof StaleSocket && attempt === 1) continue;
        throw error instanceof StaleSocket ? error.cause : error;
      }
    }
  };

  private once(path: string, headers: Record<string, string>, signal?: AbortSignal): Promise<ContentResponse> {
    signal?.throwIfAborted();
    return new Promise<ContentResponse>((resolve, reject) => {
      const url = new URL(path, this.origin);
      const request = this.request(url, { method: 'GET', headers, agent: this.agent, signal });
      request.setTimeout(this.options.timeoutMs, () =>
        request.destroy(new Error(`no bytes from upstream for ${this.options.timeoutMs} ms`)),
      );
      request.once('error', (error: NodeJS.ErrnoException) => {
        if (signal?.aborted) reject(signal.reason);
        else if (request.reusedSocket && error.code === 'ECONNRESET') reject(new StaleSocket(error));
        else reject(new MarqueeNetworkError(`GET ${url.pathname} got no answer: ${error.message}`, 1, error));
      });
      request.once('response', (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          resolve({ status, headers: response.headers, body: response });
          return;
        }
        readProblem(response).then(reject, reject);
      });
      request.end();
    });
  }

  /** Closes the kept-alive sockets. */
  close(): void {
    this.agent.destroy();
  }
}

class StaleSocket extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

async function readProblem(response: http.IncomingMessage): Promise<MarqueeProblem> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      if ((size += chunk.length) > PROBLEM_MAX_BYTES) break;
      chunks.push(chunk);
    }
  } catch {
    // The status says enough.
  }
  response.destroy();
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  return problemOf(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), headers);
}
