import { describe, expect, it } from 'vitest';
import { CurrentContext } from './child-context';
import type { ContextPayload } from './protocol';

const PLAYER = 'http://localhost:8080';

function context(overrides: Partial<ContextPayload> = {}): ContextPayload {
  return {
    application_id: 'app_counter000001',
    release_id: 'rel_counter000001',
    placement_id: 'board',
    player_origin: PLAYER,
    capabilities: { 'page.advance': true, 'kv.read': true, 'kv.write': false },
    viewport: { width: 1280, height: 720 },
    placement: { width: 640, height: 360 },
    screen_id: 'scr_lobby0000001',
    generation: 1,
    nonce: 'n'.repeat(32),
    ...overrides,
  };
}

const codeOf = (result: { ok: boolean; code?: string }) => (result.ok ? 'ok' : result.code);

describe("a bridge child's current context", () => {
  it('takes the first context and shows it to the app frozen, in camelCase', () => {
    const current = new CurrentContext();
    const accepted = current.accept('board', PLAYER, context());
    if (!accepted.ok) throw new Error(accepted.detail);
    expect(accepted.reactivated).toBe(false);
    expect(accepted.context).toEqual({
      applicationId: 'app_counter000001',
      releaseId: 'rel_counter000001',
      placementId: 'board',
      screenId: 'scr_lobby0000001',
      generation: 1,
      capabilities: { 'page.advance': true, 'kv.read': true, 'kv.write': false },
      viewport: { width: 1280, height: 720 },
      placement: { width: 640, height: 360 },
    });
    expect(Object.isFrozen(accepted.context) && Object.isFrozen(accepted.context.capabilities)).toBe(true);
    expect(current.app).toBe(accepted.context);
  });

  it('refuses a context for another placement or player than the envelope and the pinned parent', () => {
    const current = new CurrentContext();
    expect(codeOf(current.accept('other', PLAYER, context()))).toBe('invalid_placement');
    expect(codeOf(current.accept('board', 'http://elsewhere.example', context()))).toBe('invalid_player_origin');
    expect(current.wire).toBeNull();
  });

  it('keeps application and release, never goes back a generation, and says when it moved on', () => {
    const current = new CurrentContext();
    current.accept('board', PLAYER, context({ generation: 2 }));
    expect(codeOf(current.accept('board', PLAYER, context({ generation: 1 })))).toBe('invalid_generation');
    expect(
      codeOf(current.accept('board', PLAYER, context({ generation: 2, application_id: 'app_other0000001' }))),
    ).toBe('invalid_application');
    expect(codeOf(current.accept('board', PLAYER, context({ generation: 2, release_id: 'rel_other0000001' })))).toBe(
      'invalid_release',
    );
    const same = current.accept('board', PLAYER, context({ generation: 2 }));
    expect(same.ok && same.reactivated).toBe(false);
    const next = current.accept('board', PLAYER, context({ generation: 3 }));
    expect(next.ok && next.reactivated).toBe(true);
    expect(current.app?.generation).toBe(3);
  });

  it('resizes within its activation only', () => {
    const current = new CurrentContext();
    current.accept('board', PLAYER, context({ generation: 4 }));
    expect(codeOf(current.resize(3, { width: 1, height: 1 }, { width: 1, height: 1 }))).toBe('invalid_generation');
    const resized = current.resize(4, { width: 1920, height: 1080 }, { width: 960, height: 540 });
    if (!resized.ok) throw new Error(resized.detail);
    expect(resized.change).toEqual({ viewport: { width: 1920, height: 1080 }, placement: { width: 960, height: 540 } });
    expect(current.app?.placement).toEqual({ width: 960, height: 540 });
    expect(current.wire?.viewport).toEqual({ width: 1920, height: 1080 });
  });
});
