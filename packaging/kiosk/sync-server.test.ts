// The agent's loopback server on requests it cannot read: the runtime plane's problems, never a 500.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KioskAgent } from './agent';
import { Renderer, startAgent, tempDataDir } from './agent.fixtures';

let agent: KioskAgent;
const logged: string[] = [];
beforeAll(async () => {
  // No upstream at all: what is checked here is the agent's own reading of a request.
  agent = await startAgent('http://127.0.0.1:1', tempDataDir(), {
    log: (level, message) => level === 'error' && logged.push(message),
  });
});
afterAll(() => agent.stop());

const post = (pathname: string, body: string, method = 'POST') =>
  new Renderer(agent).fetch(pathname, { method, headers: { 'content-type': 'application/json' }, body });

it('answers a body that is not JSON with 400 invalid_request (malformed_json), on every JSON route', async () => {
  for (const [pathname, method] of [
    ['/runtime/v1/reports', 'POST'],
    ['/runtime/v1/playback', 'POST'],
    ['/runtime/v1/sync/advance', 'POST'],
    ['/runtime/v1/pairing-sessions/complete', 'POST'],
    ['/runtime/v1/apps/app_x/kv/k', 'PUT'],
  ]) {
    const res = await post(pathname!, '{"secret": "kept out of the log', method);
    expect(res.status, pathname).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toMatchObject({
      status: 400,
      code: 'invalid_request',
      errors: [{ field: 'body', code: 'malformed_json' }],
    });
  }
  expect(logged).toEqual([]);
});

it('answers a body over the route limit with 400 invalid_request (too_large)', async () => {
  const res = await post('/runtime/v1/reports', JSON.stringify({ context: 'x'.repeat(70 * 1024) }));
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ code: 'invalid_request', errors: [{ field: 'body', code: 'too_large' }] });
  expect(logged).toEqual([]);
});
