// Event streams and HEAD (review 3, finding D): a HEAD answer has no body, so a stream route must
// answer its headers and end, or the connection (and whatever is pipelined behind it) is held.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';
import type { RouteEntry } from './dispatch';
import { eventStream, query } from './route';
import { openSse } from './sse';

let handlerRuns = 0;
/** Streams that would stay open until the client leaves. */
const extraRoutes: RouteEntry[] = [
  {
    plane: 'control',
    method: 'GET',
    path: '/test/declared-stream',
    route: eventStream({}, async (ctx) => {
      handlerRuns++;
      openSse(ctx.res, { lifecycle: ctx.services.lifecycle });
    }),
  },
  {
    plane: 'control',
    method: 'GET',
    path: '/test/plain-query-stream',
    route: query({}, async (ctx) => void openSse(ctx.res, { lifecycle: ctx.services.lifecycle })),
  },
];

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start({ extraRoutes });
});
afterAll(async () => server.stop());

/** Writes the requests on one keep-alive connection; resolves with the status lines answered within the wait. */
async function pipelinedAnswers(requests: string[], waitMs = 1500): Promise<{ statuses: string[]; text: string }> {
  const socket = net.connect(server.port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(requests.join(''));
  const statuses = () => text.match(/^HTTP\/1\.1 \d+/gm) ?? [];
  const deadline = Date.now() + waitMs;
  while (statuses().length < requests.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  socket.destroy();
  return { statuses: statuses(), text };
}

const head = (path: string) => `HEAD ${path} HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`;
const health = () => `GET /.health HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`;

describe('HEAD of an event stream', () => {
  it('answers the stream headers and ends, without running the handler of an eventStream route', async () => {
    const { statuses, text } = await pipelinedAnswers([head('/test/declared-stream'), health()]);
    expect(statuses).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(text).toMatch(/content-type: text\/event-stream/i);
    expect(text).toMatch(/cache-control: no-cache, no-store, no-transform/i);
    expect(handlerRuns).toBe(0);
  });

  it('ends too when a plain handler opens a stream for HEAD', async () => {
    const { statuses, text } = await pipelinedAnswers([head('/test/plain-query-stream'), health()]);
    expect(statuses).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(text).not.toContain('retry:');
  });

  it('still streams a GET', async () => {
    const { statuses, text } = await pipelinedAnswers(
      [`GET /test/declared-stream HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`],
      300,
    );
    expect(statuses).toEqual(['HTTP/1.1 200']);
    expect(text).toContain('retry: 3000');
    expect(handlerRuns).toBe(1);
  });
});
