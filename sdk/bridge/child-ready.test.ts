import { describe, expect, it } from 'vitest';
import { freezeContext } from './child-context';
import { Readiness } from './child-ready';
import { BridgeError, type ContextPayload } from './protocol';

const context = (generation: number) =>
  freezeContext({
    application_id: 'app_counter000001',
    release_id: 'rel_counter000001',
    placement_id: 'board',
    player_origin: 'http://localhost:8080',
    capabilities: { 'page.advance': true, 'kv.read': true, 'kv.write': true },
    viewport: { width: 1280, height: 720 },
    placement: { width: 640, height: 360 },
    generation,
    nonce: 'n'.repeat(32),
  } satisfies ContextPayload);

function readiness(answer: () => Promise<unknown> = async () => null) {
  const announced: number[] = [];
  const diagnostics: string[] = [];
  let generation = 0;
  const ready = new Readiness(
    () => (announced.push(generation), answer()),
    (code) => diagnostics.push(code),
  );
  return { ready, announced, diagnostics, at: (g: number) => (generation = g) };
}

describe('ready()', () => {
  it('announces nothing before the app asks; then the current activation and every later one', async () => {
    const { ready, announced, at } = readiness();
    at(1);
    ready.activated(context(1));
    expect(announced).toEqual([]);
    const first = ready.start(context(1));
    expect(await first).toEqual(context(1));
    expect(ready.start(context(1))).toBe(first);
    at(2);
    ready.activated(context(2));
    expect(announced).toEqual([1, 2]);
  });

  it('waits for the first context when asked before one arrived', async () => {
    const { ready, announced, at } = readiness();
    const promise = ready.start(null);
    expect(announced).toEqual([]);
    at(1);
    ready.activated(context(1));
    expect((await promise).generation).toBe(1);
  });

  it('rejects the app when the first announcement fails, and only diagnoses later ones', async () => {
    const { ready, diagnostics } = readiness(async () => {
      throw new BridgeError('ack_timeout', 'silent');
    });
    await expect(ready.start(context(1))).rejects.toMatchObject({ code: 'ack_timeout' });
    ready.activated(context(2));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(diagnostics).toEqual(['ack_timeout']);
  });

  it('fails a waiting app for good (no trusted player, or destroyed)', async () => {
    const { ready } = readiness();
    const promise = ready.start(null);
    ready.fail(new BridgeError('inert', 'no player'));
    await expect(promise).rejects.toMatchObject({ code: 'inert' });
  });
});
