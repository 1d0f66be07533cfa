import { describe, expect, it } from 'vitest';
import { MarqueeProblem } from '../../../sdk/client/problem';
import { PLAYBACK_BATCH_MAX, type PlaybackReport } from '../../../sdk/contract/playback';
import { MemoryShowingStore, PlaybackQueue } from '../offline/playback-queue';
import { PlaybackUploader } from './playback-uploader';

const T0 = Date.parse('2026-11-21T12:00:00Z');

function setup(answer: (reports: PlaybackReport[]) => Promise<void>, options: { max?: number } = {}) {
  const queue = new PlaybackQueue({ store: new MemoryShowingStore(), ...options });
  const uploads: string[][] = [];
  const dropped: number[] = [];
  const logs: string[] = [];
  const uploader = new PlaybackUploader({
    queue,
    upload: async (reports) => {
      uploads.push(reports.map((r) => r.id));
      await answer(reports);
      return { counted: reports.length, duplicates: 0, refused: [] };
    },
    now: () => T0 + 60_000,
    canUpload: () => true,
    reportDropped: async (count) => void dropped.push(count),
    log: (m) => void logs.push(m),
  });
  const show = (n: number) => {
    for (let i = 0; i < n; i++)
      queue
        .begin({
          manifestRevision: 'man_1_0123456789ab',
          pageId: 'p',
          placementId: 'x',
          mediaId: 'med_a',
          startedAt: T0 + i,
        })
        .end(T0 + i + 1, 'complete');
  };
  return { queue, uploader, uploads, dropped, logs, show };
}

describe('the proof-of-play uploader', () => {
  it('uploads everything closed in batches of at most the batch size, oldest first, and empties the queue', async () => {
    const { queue, uploader, uploads, show } = setup(async () => undefined);
    show(PLAYBACK_BATCH_MAX + 20);
    expect(await uploader.flush()).toBe(PLAYBACK_BATCH_MAX + 20);
    expect(uploads.map((u) => u.length)).toEqual([PLAYBACK_BATCH_MAX, 20]);
    expect(await queue.size()).toBe(0);
  });

  it('keeps the queue when the server cannot be reached, and sends the same reports later', async () => {
    let online = false;
    const { queue, uploader, uploads, show } = setup(async () => {
      if (!online) throw new TypeError('fetch failed');
    });
    show(3);
    await expect(uploader.flush()).rejects.toThrow('fetch failed');
    expect(await queue.size()).toBe(3);
    online = true;
    await uploader.flush();
    expect(uploads[1]).toEqual(uploads[0]);
    expect(await queue.size()).toBe(0);
  });

  it('keeps the queue on a budget or a lapsed session', async () => {
    const { queue, uploader, show } = setup(async () => {
      throw new MarqueeProblem(429, { code: 'rate_limited', detail: 'slow down' });
    });
    show(2);
    await expect(uploader.flush()).rejects.toBeInstanceOf(MarqueeProblem);
    expect(await queue.size()).toBe(2);
  });

  it('drops only the report a malformed batch names, and uploads the rest', async () => {
    let refusals = 0;
    const { queue, uploader, uploads, logs, show } = setup(async (reports) => {
      if (reports.length === 3 && refusals++ === 0)
        throw new MarqueeProblem(400, {
          code: 'invalid_request',
          detail: 'reports.1.ended_at: bad',
          errors: [{ field: 'reports.1.ended_at', code: 'invalid', detail: 'bad' }],
        });
    });
    show(3);
    await uploader.flush();
    expect(uploads[1]).toEqual([uploads[0]![0], uploads[0]![2]]);
    expect(logs).toHaveLength(1);
    expect(await queue.size()).toBe(0);
  });

  it('tells the server how many showings the bound dropped, once', async () => {
    const { uploader, dropped, show } = setup(async () => undefined, { max: 2 });
    show(5);
    await uploader.flush();
    await uploader.flush();
    expect(dropped).toEqual([3]);
  });
});
