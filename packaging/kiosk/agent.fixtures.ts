// Test helpers: a kiosk agent against a real Marquee server, and a renderer stand-in that calls the
// agent as the player does. The owner's side goes through the SDK client, never the server's code.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { createMarqueeClient } from '../../sdk/client/marquee-client';
import { KioskAgent, type AgentOptions } from './agent';
import { fixedHostFacts } from './host-facts';

export const HOST = { platform: 'linux-x64', model: 'Test box', manufacturer: 'Marquee', duid: crypto.randomUUID() };

/** A player build stand-in: the agent serves it like dist/player. */
export function fakePlayerDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-kiosk-player-'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><title>player</title></head><body></body></html>',
  );
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'assets', 'app.js'), 'console.log(1)');
  return dir;
}

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-kiosk-data-'));
}

export async function startAgent(upstream: string, dataDir: string, extra: Partial<AgentOptions> = {}) {
  return KioskAgent.start({
    server: upstream,
    dataDir,
    port: 0,
    playerDir: fakePlayerDir(),
    hostFacts: fixedHostFacts({ ...HOST, duid: `${HOST.duid}-${path.basename(dataDir)}` }),
    reconnectMaxMs: 300,
    log: process.env.KIOSK_TEST_LOG ? (level, message, fields) => console.log(level, message, fields ?? '') : undefined,
    ...extra,
  });
}

/** The renderer's side: calls to the agent's loopback origin, as the player makes them. */
export class Renderer {
  constructor(readonly agent: KioskAgent) {}

  fetch(pathname: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.agent.origin}${pathname}`, init);
  }

  post(pathname: string, json?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(pathname, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
  }

  /** Reads an SSE answer until it ends or `ms` pass; returns its frames. */
  async stream(pathname: string, ms = 10_000): Promise<{ event: string; id?: string; data: any }[]> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), ms);
    const frames: { event: string; id?: string; data: any }[] = [];
    try {
      const res = await this.fetch(pathname, { signal: abort.signal });
      const text = await res.text().catch(() => '');
      for (const block of text.split('\n\n')) {
        const frame: { event: string; id?: string; data: any } = { event: '', data: undefined };
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) frame.event = line.slice(7);
          if (line.startsWith('id: ')) frame.id = line.slice(4);
          if (line.startsWith('data: ') && line.length > 6) frame.data = JSON.parse(line.slice(6));
        }
        if (frame.event) frames.push(frame);
      }
    } catch {
      // aborted: what arrived is in `frames` only when the stream ended; callers expect an end
    } finally {
      clearTimeout(timer);
    }
    return frames;
  }

  /** Pairs through the agent as the player does, the owner (at `control`) claiming the code on glass. */
  async pair(control: string, token: string): Promise<{ screen: { id: string }; public_url: string }> {
    const started = await this.post('/runtime/v1/pairing-sessions');
    expect(started.status, await started.clone().text()).toBe(201);
    const { code } = (await started.json()) as { code: string };
    await createMarqueeClient({ baseUrl: control, token }).screens.pair({ code, label: 'Kiosk' });
    const frames = await this.stream('/runtime/v1/pairing-events');
    expect(frames.map((f) => f.event)).toEqual(['pairing.claimed']);
    const done = await this.post('/runtime/v1/pairing-sessions/complete', {
      completion_nonce: frames[0]!.data.completion_nonce,
    });
    expect(done.status).toBe(200);
    return (await done.json()) as { screen: { id: string }; public_url: string };
  }
}

export async function until<T>(probe: () => T | Promise<T>, ms = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
