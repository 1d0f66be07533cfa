import { describe, expect, it } from 'vitest';
import { parseRuntimeEvent } from '../../../sdk/contract/event-types';
import { readActedReload, RELOAD_QUIET_MS, reloadRequestOf, shouldActOnReload, writeActedReload } from './reload-rule';

describe('the ten-minute reload rule', () => {
  const now = 1_000_000_000;

  it('acts on the first reload', () => {
    expect(shouldActOnReload({ reloadId: 'rld_a' }, now, null)).toBe(true);
  });

  it('ignores a reload within ten minutes of the last one acted on', () => {
    const last = { reloadId: 'rld_a', at: now - RELOAD_QUIET_MS + 1 };
    expect(shouldActOnReload({ reloadId: 'rld_b' }, now, last)).toBe(false);
    expect(shouldActOnReload({ reloadId: 'rld_b' }, now + 1, last)).toBe(true);
  });

  it('never acts twice on the same reload, nor on an expired one', () => {
    expect(shouldActOnReload({ reloadId: 'rld_a' }, now, { reloadId: 'rld_a', at: now - 3 * RELOAD_QUIET_MS })).toBe(
      false,
    );
    expect(shouldActOnReload({ reloadId: 'rld_c', expiresAt: now }, now, null)).toBe(false);
  });

  it('reads the request from the event details', () => {
    expect(
      reloadRequestOf({ reason: 'project', reload_id: 'rld_x', spread_s: 0, expires_at: '2026-01-01T00:10:00Z' }),
    ).toEqual({ reloadId: 'rld_x', expiresAt: Date.parse('2026-01-01T00:10:00Z') });
    // A reload without its request never reaches the rule: the contract refuses the event.
    expect(parseRuntimeEvent({ type: 'player.reload', details: { reason: 'project' } })).toBeUndefined();
    expect(parseRuntimeEvent({ type: 'player.reload', details: null })).toBeUndefined();
  });

  it('remembers what it acted on across the reload', () => {
    const map = new Map<string, string>();
    const storage = {
      getItem: (k: string) => map.get(k) ?? null,
      setItem: (k: string, v: string) => void map.set(k, v),
    };
    expect(readActedReload(storage)).toBeNull();
    writeActedReload(storage, { reloadId: 'rld_a', at: 5 });
    expect(readActedReload(storage)).toEqual({ reloadId: 'rld_a', at: 5 });
    map.set('marquee.player.last-reload', '{broken');
    expect(readActedReload(storage)).toBeNull();
  });
});
