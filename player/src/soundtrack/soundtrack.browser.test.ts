// The soundtrack element in Chromium against tracks that fail: a failing track is retried with
// backoff and jitter (never a request storm), the next track is tried after repeated failures,
// and a single track that comes back is played again (never silence for good).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mediaRoute, type RuntimeSoundtrack } from '../../../sdk/contract/manifest';
import { silentMp3 } from '../../../e2e/support/media-fixtures';
import type { SoundtrackPlayer } from './soundtrack-player';
import { PlayerFixture } from '../testing/player-fixture';

const fixture = new PlayerFixture();
fixture.reportFailures();
const RETRY = { initialMs: 200, maxMs: 800, attemptsPerTrack: 3 };

beforeAll(async () => {
  await fixture.start();
}, 60_000);
afterAll(() => fixture.stop());

beforeEach(() => {
  fixture.media.clear();
  fixture.mediaRequests.clear();
});

type TestWindow = { t: typeof import('../testing/engine-entry'); s: SoundtrackPlayer };

function soundtrack(...mediaIds: string[]): RuntimeSoundtrack {
  return {
    grantId: 'gr_test',
    tracks: mediaIds.map((mediaId) => ({
      mediaId,
      src: mediaRoute('man_test', mediaId),
      sha256: 'a'.repeat(64),
      bytes: 1000,
      contentType: 'audio/mpeg' as const,
      durationMs: 2000,
    })),
  };
}

async function play(value: RuntimeSoundtrack): Promise<Page> {
  const p = await fixture.open();
  await p.evaluate(
    ({ value, retry }) => {
      const w = window as unknown as TestWindow;
      w.s = w.t.mountSoundtrack(retry);
      w.s.set(value);
    },
    { value, retry: RETRY },
  );
  return p;
}

const playing = (p: Page) =>
  p.evaluate(() => {
    const a = document.querySelector('audio')!;
    return { mediaId: a.dataset.mediaId, playing: !a.paused && a.currentTime > 0 };
  });
const requests = (id: string) => fixture.mediaRequests.get(id) ?? 0;

describe('soundtrack failures', () => {
  it('retries failing tracks with backoff: no request storm', async () => {
    fixture.media.set('med_forbidden', { body: Buffer.alloc(0), type: 'audio/mpeg', status: 403 });
    fixture.media.set('med_broken', { body: Buffer.alloc(0), type: 'audio/mpeg', status: 500 });
    const p = await play(soundtrack('med_forbidden', 'med_broken'));
    await p.waitForTimeout(3000);
    // 200 ms doubling to 800 ms (each between half and all of that): at most about eight tries in 3 s.
    const total = requests('med_forbidden') + requests('med_broken');
    expect(total).toBeGreaterThanOrEqual(3);
    expect(total).toBeLessThanOrEqual(10);
    // Both tracks were tried: a failing track is left for the next after repeated failures.
    expect(requests('med_broken')).toBeGreaterThan(0);
    await p.context().close();
  });

  it('moves on to a track that works after repeated failures of one that does not', async () => {
    fixture.media.set('med_forbidden', { body: Buffer.alloc(0), type: 'audio/mpeg', status: 403 });
    fixture.media.set('med_music', { body: silentMp3(4), type: 'audio/mpeg' });
    const p = await play(soundtrack('med_forbidden', 'med_music'));
    await expect.poll(() => playing(p), { timeout: 8000 }).toEqual({ mediaId: 'med_music', playing: true });
    expect(requests('med_forbidden')).toBe(RETRY.attemptsPerTrack);
    await p.context().close();
  });

  it('plays a single track again once it answers (a 5xx or an egress 429 is not silence for good)', async () => {
    fixture.media.set('med_music', { body: silentMp3(4), type: 'audio/mpeg', status: 503 });
    const p = await play(soundtrack('med_music'));
    await expect.poll(() => requests('med_music'), { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    fixture.media.set('med_music', { body: silentMp3(4), type: 'audio/mpeg' });
    await expect.poll(() => playing(p), { timeout: 8000 }).toEqual({ mediaId: 'med_music', playing: true });
    await p.context().close();
  });

  it('stops retrying when the soundtrack goes away', async () => {
    fixture.media.set('med_forbidden', { body: Buffer.alloc(0), type: 'audio/mpeg', status: 403 });
    const p = await play(soundtrack('med_forbidden'));
    await expect.poll(() => requests('med_forbidden'), { timeout: 3000 }).toBeGreaterThanOrEqual(1);
    await p.evaluate(() => (window as unknown as TestWindow).s.set(undefined));
    const after = requests('med_forbidden');
    await p.waitForTimeout(1500);
    expect(requests('med_forbidden')).toBe(after);
    await p.context().close();
  });
});
