import { describe, expect, it } from 'vitest';
import { PLAYBACK_REPORT_MAX_AGE_MS } from '../../../sdk/contract/playback';
import { MemoryShowingStore, PlaybackQueue, reportOf, type ShowingFacts } from './playback-queue';

const T0 = Date.parse('2026-11-21T12:00:00Z');

function facts(at: number, extra: Partial<ShowingFacts> = {}): ShowingFacts {
  return {
    manifestRevision: 'man_3_0123456789ab',
    pageId: 'welcome',
    placementId: 'hero',
    mediaId: 'med_a',
    startedAt: at,
    ...extra,
  };
}

function queue(options: { max?: number } = {}) {
  const store = new MemoryShowingStore();
  let n = 0;
  return { store, q: new PlaybackQueue({ store, newId: () => `report-${++n}`, ...options }) };
}

describe('the proof-of-play queue', () => {
  it('writes a showing down as it starts, before it ends or is uploaded', async () => {
    const { store, q } = queue();
    q.begin(facts(T0));
    await q.settled();
    expect(await store.open()).toEqual([expect.objectContaining({ id: 'report-1', endedAt: null })]);
    expect(await q.nextBatch(T0 + 1000)).toEqual([]); // on glass: not uploaded yet
  });

  it('uploads closed showings in the order they started, each as its report', async () => {
    const { q } = queue();
    const a = q.begin(facts(T0));
    const b = q.begin(facts(T0 + 8000, { mediaId: undefined, applicationId: 'app_x', slotKey: 'lobby' }));
    const c = q.begin(facts(T0 + 9000));
    b.end(T0 + 12_000, 'interrupted');
    a.end(T0 + 8000, 'complete');
    const batch = await q.nextBatch(T0 + 20_000);
    expect(batch.map(reportOf)).toEqual([
      {
        id: 'report-1',
        manifest_revision: 'man_3_0123456789ab',
        page_id: 'welcome',
        placement_id: 'hero',
        media_id: 'med_a',
        started_at: '2026-11-21T12:00:00.000Z',
        ended_at: '2026-11-21T12:00:08.000Z',
        outcome: 'complete',
      },
      {
        id: 'report-2',
        manifest_revision: 'man_3_0123456789ab',
        page_id: 'welcome',
        placement_id: 'hero',
        slot_key: 'lobby',
        application_id: 'app_x',
        started_at: '2026-11-21T12:00:08.000Z',
        ended_at: '2026-11-21T12:00:12.000Z',
        outcome: 'interrupted',
      },
    ]);
    c.end(T0 + 10_000, 'complete');
    expect((await q.nextBatch(T0 + 20_000)).map((s) => s.id)).toEqual(['report-1', 'report-2', 'report-3']);
  });

  it('deletes a showing only once it is acknowledged; an unacknowledged batch comes again, same ids', async () => {
    const { q } = queue();
    q.begin(facts(T0)).end(T0 + 1000, 'complete');
    q.begin(facts(T0 + 1000)).end(T0 + 2000, 'complete');
    const first = await q.nextBatch(T0 + 5000);
    // The upload failed (no acknowledgment): the same reports, with the same ids, go next time.
    const again = await q.nextBatch(T0 + 6000);
    expect(again.map((s) => s.id)).toEqual(first.map((s) => s.id));
    await q.acknowledge(again);
    expect(await q.nextBatch(T0 + 7000)).toEqual([]);
    expect(await q.size()).toBe(0);
  });

  it('closes what a crash left on glass as interrupted, with no time on glass', async () => {
    const store = new MemoryShowingStore();
    const before = new PlaybackQueue({ store, newId: () => 'crashed' });
    before.begin(facts(T0)); // the tab dies with this on glass
    await before.settled();
    const after = new PlaybackQueue({ store });
    expect(await after.recover()).toBe(1);
    expect((await after.nextBatch(T0 + 60_000)).map(reportOf)).toEqual([
      expect.objectContaining({
        id: 'crashed',
        started_at: '2026-11-21T12:00:00.000Z',
        ended_at: '2026-11-21T12:00:00.000Z',
        outcome: 'interrupted',
      }),
    ]);
  });

  it('holds at most its bound, dropping the oldest and counting them', async () => {
    const { q } = queue({ max: 3 });
    for (let i = 0; i < 5; i++) q.begin(facts(T0 + i * 1000)).end(T0 + i * 1000 + 500, 'complete');
    await q.settled();
    expect(await q.size()).toBe(3);
    expect(q.dropped).toBe(2);
    expect((await q.nextBatch(T0 + 10_000)).map((s) => s.id)).toEqual(['report-3', 'report-4', 'report-5']);
  });

  it('drops showings older than the server accepts instead of uploading them', async () => {
    const { q } = queue();
    q.begin(facts(T0)).end(T0 + 1000, 'complete');
    q.begin(facts(T0 + PLAYBACK_REPORT_MAX_AGE_MS)).end(T0 + PLAYBACK_REPORT_MAX_AGE_MS + 1000, 'complete');
    const batch = await q.nextBatch(T0 + PLAYBACK_REPORT_MAX_AGE_MS + 5000);
    expect(batch.map((s) => s.id)).toEqual(['report-2']);
    expect(q.dropped).toBe(1);
    expect(await q.size()).toBe(1);
  });

  it('ends a showing once, never before it started, and takes batches of at most the given size', async () => {
    const { q } = queue();
    const h = q.begin(facts(T0));
    h.end(T0 - 5000, 'complete'); // a clock that stepped back
    h.end(T0 + 9000, 'interrupted');
    for (let i = 1; i < 5; i++) q.begin(facts(T0 + i)).end(T0 + i + 1, 'complete');
    const [first] = await q.nextBatch(T0 + 10_000);
    expect(reportOf(first!)).toMatchObject({ ended_at: '2026-11-21T12:00:00.000Z', outcome: 'complete' });
    expect(await q.nextBatch(T0 + 10_000, 2)).toHaveLength(2);
  });
});
