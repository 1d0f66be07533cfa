import { afterEach, describe, expect, it, vi } from 'vitest';
import { RuntimeClient } from '../../../sdk/client/runtime';
import { CODE_RENEWAL_MARGIN_MS, MIN_CODE_LIFETIME_MS, pairScreen, renewalDelay } from './pairing-flow';

function sse(frames: string): Response {
  return new Response(frames, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

describe('pairing flow', () => {
  it('renews a code a minute before it expires, never sooner than the floor', () => {
    expect(renewalDelay(600_000, 0)).toBe(600_000 - CODE_RENEWAL_MARGIN_MS);
    expect(renewalDelay(10_000, 0)).toBe(MIN_CODE_LIFETIME_MS);
  });

  it('shows the code, hears the claim on the pairing stream and completes with its nonce', async () => {
    const calls: string[] = [];
    const nonce = 'n'.repeat(43);
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const url = new URL(String(input));
      calls.push(`${init?.method ?? 'GET'} ${url.pathname} ${init?.credentials}`);
      if (url.pathname === '/runtime/v1/pairing-sessions')
        return Response.json(
          { code: 'K7QX2M', expires_at: new Date(Date.now() + 600_000).toISOString() },
          { status: 201 },
        );
      if (url.pathname === '/runtime/v1/pairing-events')
        return sse(`event: pairing.claimed\ndata: {"type":"pairing.claimed","completion_nonce":"${nonce}"}\n\n`);
      if (url.pathname === '/runtime/v1/pairing-sessions/complete') {
        expect(JSON.parse(String(init?.body))).toEqual({ completion_nonce: nonce });
        return Response.json({ screen: { id: 'scr_1' }, public_url: 'http://localhost:8080/s/pub' }, { status: 200 });
      }
      return new Response(null, { status: 404 });
    };
    const codes: string[] = [];
    const completion = await pairScreen({
      client: new RuntimeClient({ runtimeOrigin: 'http://localhost:8080', fetch }),
      signal: new AbortController().signal,
      onCode: (code) => codes.push(code),
    });
    expect(codes).toEqual(['K7QX2M']);
    expect(completion.public_url).toBe('http://localhost:8080/s/pub');
    expect(calls).toEqual([
      'POST /runtime/v1/pairing-sessions include',
      'GET /runtime/v1/pairing-events include',
      'POST /runtime/v1/pairing-sessions/complete include',
    ]);
  });

  it('starts over with a new code when the pairing stream is refused', async () => {
    let starts = 0;
    const fetch: typeof globalThis.fetch = async (input) => {
      const path = new URL(String(input)).pathname;
      if (path === '/runtime/v1/pairing-sessions') {
        starts++;
        return Response.json(
          { code: starts === 1 ? 'AAAAAA' : 'BBBBBB', expires_at: new Date(Date.now() + 600_000).toISOString() },
          { status: 201 },
        );
      }
      if (path === '/runtime/v1/pairing-events') {
        if (starts === 1) return Response.json({ code: 'unauthorized' }, { status: 401 });
        return sse(
          `event: pairing.claimed\ndata: {"type":"pairing.claimed","completion_nonce":"${'m'.repeat(43)}"}\n\n`,
        );
      }
      return Response.json({ screen: { id: 'scr_1' }, public_url: 'u' }, { status: 200 });
    };
    const codes: string[] = [];
    await pairScreen({
      client: new RuntimeClient({ runtimeOrigin: 'http://localhost:8080', fetch }),
      signal: new AbortController().signal,
      onCode: (code) => codes.push(code),
    });
    expect(codes).toEqual(['AAAAAA', 'BBBBBB']);
  });

  describe('renewal', () => {
    afterEach(() => vi.useRealTimers());

    it('completes the pairing of a code claimed just as it was being replaced (the server answers 409)', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const calls: string[] = [];
      let starts = 0;
      const fetch: typeof globalThis.fetch = async (input, init) => {
        const path = new URL(String(input)).pathname;
        calls.push(`${init?.method ?? 'GET'} ${path}`);
        if (path === '/runtime/v1/pairing-sessions') {
          if (++starts === 1)
            return Response.json(
              { code: 'AAAAAA', expires_at: new Date(Date.now() + 600_000).toISOString() },
              { status: 201 },
            );
          return Response.json(
            { code: 'resource_conflict', detail: 'the code this player showed has just been claimed' },
            { status: 409 },
          );
        }
        if (path === '/runtime/v1/pairing-events') {
          // Nothing is heard before the renewal (reconnects included); afterwards the claim is replayed.
          if (starts === 1)
            return new Promise<Response>((_, reject) =>
              init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }),
            );
          return sse(
            `event: pairing.claimed\ndata: {"type":"pairing.claimed","completion_nonce":"${'k'.repeat(43)}"}\n\n`,
          );
        }
        return Response.json({ screen: { id: 'scr_1' }, public_url: 'http://localhost:8080/s/pub' }, { status: 200 });
      };
      const codes: string[] = [];
      const paired = pairScreen({
        client: new RuntimeClient({ runtimeOrigin: 'http://localhost:8080', fetch }),
        signal: new AbortController().signal,
        onCode: (code) => codes.push(code),
      });
      await vi.advanceTimersByTimeAsync(600_000 - CODE_RENEWAL_MARGIN_MS + 1000);
      const completion = await paired;
      expect(completion.screen.id).toBe('scr_1');
      expect(codes).toEqual(['AAAAAA']);
      // (The first stream may have reconnected while it waited.)
      expect(calls.filter((c, i) => c !== calls[i - 1])).toEqual([
        'POST /runtime/v1/pairing-sessions',
        'GET /runtime/v1/pairing-events',
        'POST /runtime/v1/pairing-sessions',
        'GET /runtime/v1/pairing-events',
        'POST /runtime/v1/pairing-sessions/complete',
      ]);
    });
  });
});
