// Proof of play at fleet scale, in this process on one SQLite store: a day of 500 screens' reports
// (a showing a minute each, in the players' batches of 500) counted as the upload route counts them
// (dedup record + daily rows, one transaction a batch), against bare inserts of the same rows into
// a table without keys in the same store; then the same day uploaded again (every id a duplicate),
// and reading the day back as JSON pages and as one CSV. MARQUEE_BENCH_PLAYBACK_PER_SCREEN sets
// the showings per screen (1440 by default; a 10-second loop is 8640).
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { PLAYBACK_BATCH_MAX, type PlaybackReport } from '../sdk/contract/playback';
import { insertScreensShowing } from '../server/manifests/manifests.fixtures';
import { currentManifest } from '../server/manifests/minting';
import { manifestRevisionId } from '../server/manifests/manifest-ids';
import { imagePlacement, insertMedia, page } from '../server/playlists/content.fixtures';
import { csvHeader, csvLine } from '../server/playback/playback-csv';
import { ingestPlayback, listPlayback, localDay } from '../server/playback/playback';
import { TestServer } from '../server/testing/harness';
import { ratio, table } from './harness';

const FLEET = 500;
const PER_SCREEN = Number(process.env.MARQUEE_BENCH_PLAYBACK_PER_SCREEN ?? 1440);
const PAGES = 4;
const DAY_MS = 24 * 3600_000;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function playbackIngest(): Promise<void> {
  const server = await TestServer.start({ config: { logLevel: 'silent' } });
  try {
    const { services } = server;
    const { token, projectId } = await server.enroll();
    const media = await Promise.all(Array.from({ length: PAGES }, () => insertMedia(server, projectId)));
    const created = await server.request('POST', '/api/v1/playlists', {
      token,
      json: {
        name: 'Fleet loop',
        pages: media.map((id, i) => page(`p${i}`, [imagePlacement('hero', { by: 'id', media_id: id })])),
      },
    });
    if (created.status !== 201) throw new Error(`playlist: ${created.status} ${created.text}`);
    const screens = await insertScreensShowing(services, projectId, created.json().id, FLEET);
    // Half the fleet in a zone of its own: days are the screens' local days.
    await services.store.db
      .updateTable('screens')
      .set({ timezone: 'America/New_York' })
      .where('id', 'in', screens.slice(0, FLEET / 2))
      .execute();
    for (const id of screens) await currentManifest(services, id);

    const now = server.clock.now();
    const dayStart = now - DAY_MS;
    const step = DAY_MS / PER_SCREEN;
    /** One screen's day of reports, in upload batches. */
    const batchesOf = (screenId: string): PlaybackReport[][] => {
      const revision = manifestRevisionId(screenId, 1);
      const reports = Array.from({ length: PER_SCREEN }, (_, i): PlaybackReport => {
        const started = Math.floor(dayStart + i * step);
        return {
          id: crypto.randomUUID(),
          manifest_revision: revision,
          page_id: `p${i % PAGES}`,
          placement_id: 'hero',
          media_id: media[i % PAGES]!,
          started_at: new Date(started).toISOString(),
          ended_at: new Date(started + Math.floor(step)).toISOString(),
          outcome: i % 50 === 0 ? 'interrupted' : 'complete',
        };
      });
      const batches: PlaybackReport[][] = [];
      for (let i = 0; i < reports.length; i += PLAYBACK_BATCH_MAX)
        batches.push(reports.slice(i, i + PLAYBACK_BATCH_MAX));
      return batches;
    };
    const day = screens.map((id) => ({ id, batches: batchesOf(id) }));
    const total = FLEET * PER_SCREEN;
    const batchCount = day.reduce((n, s) => n + s.batches.length, 0);

    const ingest = () =>
      (async () => {
        let counted = 0;
        for (const screen of day)
          for (const batch of screen.batches)
            counted += (
              await services.store.transaction((work) =>
                ingestPlayback(
                  services,
                  work,
                  { tenantId: projectId, screenId: screen.id, manifestRevision: 1 },
                  batch,
                  now,
                ),
              )
            ).counted;
        return counted;
      })();

    // Baseline: the same rows, bare, into a table with no key, one transaction a batch, in the same store.
    await sql`CREATE TABLE bench_bare (screen_id text, report_id text, tenant_id text, manifest_revision text,
      page_id text, placement_id text, slot_key text, content_id text, started_at bigint, ended_at bigint,
      outcome text, day text, received_at bigint)`.execute(services.store.db);
    const bare = async () => {
      for (const screen of day) {
        for (const batch of screen.batches) {
          await services.store.transaction(async ({ db }) => {
            for (let i = 0; i < batch.length; i += 200) {
              const rows = batch.slice(i, i + 200).map((r) => ({
                screen_id: screen.id,
                report_id: r.id,
                tenant_id: projectId,
                manifest_revision: r.manifest_revision,
                page_id: r.page_id,
                placement_id: r.placement_id,
                slot_key: null,
                content_id: r.media_id!,
                started_at: Date.parse(r.started_at),
                ended_at: Date.parse(r.ended_at),
                outcome: r.outcome,
                day: localDay(Date.parse(r.started_at), null),
                received_at: now,
              }));
              await sql`INSERT INTO bench_bare VALUES ${sql.join(
                rows.map(
                  (r) =>
                    sql`(${r.screen_id}, ${r.report_id}, ${r.tenant_id}, ${r.manifest_revision}, ${r.page_id}, ${r.placement_id}, ${r.slot_key}, ${r.content_id}, ${r.started_at}, ${r.ended_at}, ${r.outcome}, ${r.day}, ${r.received_at})`,
                ),
              )}`.execute(db);
            }
          });
        }
      }
    };

    const bareMs = await timed(bare);
    let counted = 0;
    const ingestMs = await timed(async () => {
      counted = await ingest();
    });
    if (counted !== total) throw new Error(`counted ${counted} of ${total}`);
    let again = -1;
    const duplicateMs = await timed(async () => {
      again = await ingest();
    });
    if (again !== 0) throw new Error(`a second upload counted ${again}`);
    const rows = await services.store.db
      .selectFrom('playback_days')
      .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.sum<number>('play_count').as('plays')])
      .executeTakeFirstOrThrow();
    if (Number(rows.plays) !== total) throw new Error(`rows hold ${rows.plays} plays, not ${total}`);

    const listDay = async (format: 'json' | 'csv') => {
      let cursor: string | undefined;
      let out = format === 'csv' ? csvHeader() : '';
      do {
        const pageOf = await listPlayback(services.store.db, projectId, { cursor }, format === 'csv' ? 1000 : 200);
        out += format === 'csv' ? pageOf.items.map(csvLine).join('') : JSON.stringify(pageOf.items);
        cursor = pageOf.next ?? undefined;
      } while (cursor);
      return out.length;
    };
    const jsonMs = await timed(() => listDay('json'));
    const csvMs = await timed(() => listDay('csv'));

    table([
      {
        what: `bare inserts, ${total} rows in ${batchCount} transactions (baseline)`,
        ms: bareMs.toFixed(0),
        'rows/s': Math.round(total / (bareMs / 1000)),
        ratio: '1.00x',
      },
      {
        what: `counted: dedup record + ${rows.rows} daily rows, same batches`,
        ms: ingestMs.toFixed(0),
        'rows/s': Math.round(total / (ingestMs / 1000)),
        ratio: ratio(ingestMs, bareMs),
      },
      {
        what: 'the same day uploaded again (all duplicates)',
        ms: duplicateMs.toFixed(0),
        'rows/s': Math.round(total / (duplicateMs / 1000)),
        ratio: ratio(duplicateMs, bareMs),
      },
      { what: `reading the day's ${rows.rows} rows as JSON pages`, ms: jsonMs.toFixed(0), 'rows/s': '', ratio: '' },
      { what: 'the same rows as one CSV', ms: csvMs.toFixed(0), 'rows/s': '', ratio: ratio(csvMs, jsonMs) },
    ]);
    console.log(
      `a day of ${FLEET} screens at ${PER_SCREEN} showings each: counted in ${(ingestMs / 1000).toFixed(1)} s ` +
        `(${((ingestMs / DAY_MS) * 100).toFixed(3)} % of the day it covers)`,
    );
  } finally {
    await server.stop();
  }
}
