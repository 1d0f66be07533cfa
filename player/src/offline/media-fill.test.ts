import { describe, expect, it } from 'vitest';
import { fillMediaCache, type MediaToFill } from './media-fill';

const ORIGIN = 'http://player.test';
const item = (id: string, bytes: number): MediaToFill => ({
  mediaId: `med_${id}`,
  url: `${ORIGIN}/content/v1/manifests/man_1/media/med_${id}`,
  bytes,
});

/** A cache that holds `capacity` bytes and refuses more as the browser does (QuotaExceededError). */
function fakeStorage(capacity: number) {
  const held = new Map<string, number>();
  const used = () => [...held.values()].reduce((a, b) => a + b, 0);
  const fetched: string[] = [];
  return {
    fetched,
    held,
    deps: {
      cache: {
        match: async (key: string) => (held.has(key) ? new Response('x') : undefined),
        put: async (key: string, response: Response) => {
          const size = (await response.arrayBuffer()).byteLength;
          if (used() + size > capacity) throw new DOMException('the quota has been exceeded', 'QuotaExceededError');
          held.set(key, size);
        },
      },
      fetch: async (url: string) => {
        fetched.push(new URL(url).pathname.split('/').at(-1)!);
        const bytes = Number(/_(\d+)$/.exec(url)?.[1] ?? 10);
        return new Response(new Uint8Array(bytes), { headers: { 'content-length': String(bytes) } });
      },
      free: async () => capacity - used(),
      origin: ORIGIN,
    },
  };
}

describe('filling the media cache ahead of playback', () => {
  it('caches what the manifest plays that it does not hold yet, each once', async () => {
    const storage = fakeStorage(1000);
    await fillMediaCache([item('a_10', 10), item('b_20', 20)], storage.deps);
    await fillMediaCache([item('a_10', 10), item('b_20', 20)], storage.deps);
    expect(storage.fetched).toEqual(['med_a_10', 'med_b_20']);
    expect(storage.held.size).toBe(2);
  });

  it('downloads nothing that cannot fit, and stops at the first answer the quota refuses', async () => {
    const storage = fakeStorage(100);
    // Every manifest fetch (capability refreshes: every four minutes) asks again: a full disk must
    // not cost the whole loop's bytes each time.
    for (let refresh = 0; refresh < 3; refresh++)
      await fillMediaCache([item('a_60', 60), item('big_500', 500), item('b_30', 30)], storage.deps);
    expect(storage.fetched).toEqual(['med_a_60', 'med_b_30']);

    // The browser's estimate is generous (it often is), the cache's quota is not: the refused
    // answer ends the pass, the rest is not downloaded to be refused too.
    const tight = fakeStorage(50);
    tight.deps.free = async () => 10_000;
    await fillMediaCache([item('c_40', 40), item('d_40', 40), item('e_40', 40), item('f_5', 5)], tight.deps);
    expect(tight.fetched).toEqual(['med_c_40', 'med_d_40']);
  });
});
