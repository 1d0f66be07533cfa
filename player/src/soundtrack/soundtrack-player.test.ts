import { describe, expect, it } from 'vitest';
import { soundtrackKey, type RuntimeSoundtrack } from '../../../sdk/contract/manifest';
import { nextTrackIndex } from './soundtrack-player';

const track = (mediaId: string, revision: string) => ({
  mediaId,
  src: `/content/v1/manifests/${revision}/media/${mediaId}`,
  sha256: mediaId
    .padEnd(64, 'a')
    .slice(0, 64)
    .replace(/[^a-f0-9]/g, 'b'),
  bytes: 10,
  contentType: 'audio/mpeg' as const,
  durationMs: 1000,
});

describe('soundtrack continuity', () => {
  it('loops the ordered tracks', () => {
    expect([0, 1, 2].map((i) => nextTrackIndex(i, 3))).toEqual([1, 2, 0]);
    expect(nextTrackIndex(0, 1)).toBe(0);
  });

  it('keeps playing across a manifest update that carries the same soundtrack under new URLs', () => {
    const before: RuntimeSoundtrack = { grantId: 'gr_1', tracks: [track('med_a', 'man_1'), track('med_b', 'man_1')] };
    const after: RuntimeSoundtrack = { grantId: 'gr_2', tracks: [track('med_a', 'man_2'), track('med_b', 'man_2')] };
    expect(soundtrackKey(after)).toBe(soundtrackKey(before));
    expect(soundtrackKey({ ...after, tracks: [after.tracks[1]!, after.tracks[0]!] })).not.toBe(soundtrackKey(before));
  });
});
