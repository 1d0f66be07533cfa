import { describe, expect, it } from 'vitest';
import { parseRuntimeManifest, type RuntimeManifest } from '../../../sdk/contract/manifest';
import { manifestFixture, pageFixture, RUNTIME_ORIGIN } from './manifest.fixtures';
import { playableAt, switchAt, UPCOMING_GRACE_MS } from './upcoming';

const AT = '2026-03-02T12:00:00.000Z';
/** When the derived loop starts: the boundary plus the grace. */
const at = Date.parse(AT) + UPCOMING_GRACE_MS;

function served(overrides: Partial<RuntimeManifest> = {}): RuntimeManifest {
  return manifestFixture({
    nextBoundaryAt: AT,
    upcoming: { at: AT, playlistId: 'pl_next', playlistRevision: 7, pages: [pageFixture('lunch')] },
    ...overrides,
  });
}

describe('playableAt', () => {
  it('plays the served pages before the boundary', () => {
    const m = served();
    expect(playableAt(m, at - 1)).toEqual({ manifest: m, derived: false });
    expect(switchAt(m)).toBe(at);
  });

  it('plays the upcoming pages from the boundary on, under the same revision, as a derived loop', () => {
    const m = served();
    const { manifest, derived } = playableAt(m, at);
    expect(derived).toBe(true);
    expect(manifest.manifestRevision).toBe(m.manifestRevision);
    expect(manifest.grantId).toBe(m.grantId);
    expect(manifest).toMatchObject({ playlistId: 'pl_next', playlistRevision: 7 });
    expect(manifest.pages.map((p) => p.id)).toEqual(['lunch']);
    // Nothing that would make it switch again or play the old playlist's audio.
    expect(manifest.upcoming).toBeUndefined();
    expect(manifest.nextBoundaryAt).toBeUndefined();
    expect(manifest.soundtrack).toBeUndefined();
    // Still a manifest the player accepts (its media bound to the served revision).
    expect(parseRuntimeManifest(manifest, RUNTIME_ORIGIN).ok).toBe(true);
  });

  it("ends a takeover at its boundary: the derived loop is not a takeover's, so it cuts in (an offline screen's emergency ends)", () => {
    const m = served({ takeover: true });
    expect(playableAt(m, at - 1).manifest.takeover).toBe(true);
    expect(playableAt(m, at).manifest.takeover).toBeUndefined();
  });

  it("starts a sync group's derived timeline at the boundary, the same on every member", () => {
    const m = served({ sync: { group: 'wall', epoch: '2026-03-01T08:00:00.000Z' } });
    expect(playableAt(m, at + 5000).manifest.sync).toEqual({ group: 'wall', epoch: AT });
  });

  it('never derives from a manifest without upcoming', () => {
    const m = manifestFixture({ nextBoundaryAt: AT });
    expect(playableAt(m, at + 1)).toEqual({ manifest: m, derived: false });
    expect(switchAt(m)).toBeNull();
  });
});
