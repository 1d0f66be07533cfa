import { describe, expect, it } from 'vitest';
import { kvCollectionPath, KvKeyError, kvKeyPath, kvKeyProblem } from './kv';

describe('KV keys', () => {
  it.each(['a', '...', '.x', 'x.', 'a/..', '../a', 'greeting/en', 'ü', '😀', '%2e', 'é'.repeat(128)])(
    'accepts %j',
    (key) => {
      expect(kvKeyProblem(key)).toBeNull();
    },
  );

  it.each([
    ['.', /"\." or "\.\."/],
    ['..', /"\." or "\.\."/],
    ['\ud800', /lone surrogate/],
    ['a\udc00', /lone surrogate/],
    ['\udc00\ud800', /lone surrogate/],
    ['x\ud83d', /lone surrogate/],
    ['', /non-empty/],
    ['_marquee/x', /reserved/],
    ['a\u0000', /control/],
    ['é'.repeat(129), /256 UTF-8 bytes/],
  ])('refuses %j', (key, why) => {
    expect(kvKeyProblem(key)).toMatch(why);
  });

  it('builds every entry path in one place: one percent-encoded segment, never a dot segment', () => {
    expect(kvCollectionPath('owner', 'app_1')).toBe('/api/v1/applications/app_1/kv');
    expect(kvCollectionPath('runtime', 'app_1')).toBe('/runtime/v1/apps/app_1/kv');
    expect(kvKeyPath('/runtime/v1/apps/app_1/kv', 'a/../b?c#d')).toBe('/runtime/v1/apps/app_1/kv/a%2F..%2Fb%3Fc%23d');
    for (const key of ['a/../b', '...', 'x%2e']) {
      const path = kvKeyPath(kvCollectionPath('owner', 'app_1'), key);
      // What fetch would request: the URL parser keeps the path as it is.
      expect(new URL(path, 'https://control.example').pathname).toBe(path);
      expect(decodeURIComponent(path.split('/').pop()!)).toBe(key);
    }
  });

  it('throws KvKeyError for a refused key instead of building a path that means something else', () => {
    for (const key of ['.', '..', '\ud800']) {
      expect(() => kvKeyPath('/api/v1/applications/app_1/kv', key)).toThrow(KvKeyError);
    }
  });
});
