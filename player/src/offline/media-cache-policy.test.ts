import { describe, expect, it } from 'vitest';
import {
  MEDIA_EVICTION_GRACE_MS,
  MEDIA_ROUTE,
  mediaCacheKey,
  mediaIdOfCacheKey,
  mediaToEvict,
} from './media-cache-policy';

describe('media cache eviction', () => {
  const now = 10 * MEDIA_EVICTION_GRACE_MS;

  it('evicts media no manifest referenced for the grace period', () => {
    const last = new Map([
      ['med_old', now - MEDIA_EVICTION_GRACE_MS],
      ['med_recent', now - MEDIA_EVICTION_GRACE_MS + 1],
      ['med_live', now - 5 * MEDIA_EVICTION_GRACE_MS],
    ]);
    expect(
      mediaToEvict(['med_old', 'med_recent', 'med_live', 'med_unknown'], new Set(['med_live']), last, now),
    ).toEqual(['med_old']);
  });

  it('keys entries by media id, whatever manifest URL fetched them', () => {
    const key = mediaCacheKey('http://localhost:8080', 'med_abc');
    expect(mediaIdOfCacheKey(key)).toBe('med_abc');
    expect(mediaIdOfCacheKey('http://localhost:8080/assets/index.js')).toBeNull();
    expect(MEDIA_ROUTE.exec('/content/v1/manifests/man_1/media/med_abc')?.[1]).toBe('med_abc');
    expect(MEDIA_ROUTE.exec('/content/v1/manifests/man_1/releases/rel_1/package')).toBeNull();
  });
});
