// Proof of play: counting what players report went on glass, once per report id, into daily rows
// per screen, media or application, and screen-local day; and reading those rows back.
//
// A batch is counted in the route's one transaction: the report ids that are new are inserted into
// `playback_reports` (the dedup record) and only those are added to `playback_days`, so a crash
// between the two cannot happen and a retried upload adds nothing. Rows are upserted commutatively
// (sums, min/max, "last" judged by start time), so batches may arrive in any order.
import { DateTime } from 'luxon';
import { sql } from 'kysely';
import {
  PLAYBACK_CLOCK_SKEW_MS,
  PLAYBACK_REPORT_MAX_AGE_MS,
  PLAYBACK_SHOWING_MAX_MS,
  type PlaybackAck,
  type PlaybackQuery,
  type PlaybackRefusal,
  type PlaybackReport,
  type PlaybackRow,
} from '../../sdk/contract/playback';
import { manifestRevisionOf } from '../manifests/manifest-ids';
import { findManifest } from '../manifests/manifest-store';
import { invalidField, problem } from '../problem';
import type { Services } from '../services';
import type { Db, Tx, Work } from '../store/store';
import type { PlaybackDayTable, PlaybackReportTable } from './playback.tables';

/** Report rows per INSERT: well under every engine's bound on statement parameters. */
const INSERT_CHUNK = 200;

export interface PlaybackReporter {
  tenantId: string;
  screenId: string;
  /** The screen's current manifest revision (a report naming a later one is refused). */
  manifestRevision: number;
}

/** The screen-local calendar day of an instant; UTC for a screen without a (valid) time zone. */
export function localDay(at: number, timezone: string | null): string {
  const zoned = DateTime.fromMillis(at, { zone: timezone ?? 'UTC' });
  return (zoned.isValid ? zoned : DateTime.fromMillis(at, { zone: 'UTC' })).toISODate()!;
}

async function screenZone(db: Db | Tx, screenId: string): Promise<string | null> {
  const row = await db.selectFrom('screens').select('timezone').where('id', '=', screenId).executeTakeFirst();
  return row?.timezone ?? null;
}

/** What a manifest revision the reports name says about its content (undefined: pruned, judged by tenancy alone). */
interface RevisionFacts {
  content: Set<string>;
  /**
   * The zone the screen had while this revision was on glass (a zone change remints): its showings
   * count on that zone's day, however late they are uploaded. Null: the screen had none (UTC).
   */
  timezone: string | null;
  /**
   * page id → what each page of that id is: its slot key, or null for an ordinary page. The
   * revision's pages come first, then those of its `upcoming` playlist (which an offline player
   * shows past the boundary under this revision), where the same page id may mean another page.
   */
  slots: Map<string, (string | null)[]>;
}

/** The slot a showing counts for: the one the player names when a page of that id has it, else the revision's own page's. */
function slotOf(facts: RevisionFacts, pageId: string, claimed: string | null): string | null {
  const kinds = facts.slots.get(pageId) ?? [];
  return kinds.includes(claimed) ? claimed : (kinds[0] ?? null);
}

async function revisionFacts(
  services: Services,
  db: Tx,
  screenId: string,
  revision: number,
): Promise<RevisionFacts | undefined> {
  const record = await findManifest(services, db, screenId, revision);
  if (!record) return undefined;
  const rows = await db
    .selectFrom('runtime_manifest_content')
    .select('ref')
    .where('screen_id', '=', screenId)
    .where('manifest_revision', '=', revision)
    .where('kind', 'in', ['media', 'application'])
    .execute();
  const slots = new Map<string, (string | null)[]>();
  for (const page of [...record.stored.pages, ...(record.stored.upcoming?.pages ?? [])])
    slots.set(page.id, [...(slots.get(page.id) ?? []), page.slot?.key ?? null]);
  return { content: new Set(rows.map((r) => r.ref)), slots, timezone: record.stored.timezone ?? null };
}

/** Filenames of the tenant's media (in any state: deleted media keep theirs) and names of its applications. */
async function contentNames(db: Tx, tenantId: string, ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const media = ids.filter((id) => id.startsWith('med_'));
  const apps = ids.filter((id) => id.startsWith('app_'));
  if (media.length > 0) {
    const rows = await db
      .selectFrom('media')
      .select(['id', 'filename'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', media)
      .execute();
    for (const r of rows) names.set(r.id, r.filename);
  }
  if (apps.length > 0) {
    const rows = await db
      .selectFrom('applications')
      .select(['id', 'name'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', apps)
      .execute();
    for (const r of rows) names.set(r.id, r.name);
  }
  return names;
}

/**
 * Counts a batch of showings of one screen: new ids are recorded and added to their day's rows;
 * ids seen before are duplicates; reports that can never count are refused (and acknowledged).
 */
export async function ingestPlayback(
  services: Services,
  work: Work,
  reporter: PlaybackReporter,
  reports: readonly PlaybackReport[],
  now: number,
): Promise<PlaybackAck> {
  const db = work.db;
  const ids = new Set<string>();
  reports.forEach((r, i) => {
    if (ids.has(r.id)) throw invalidField(`reports.${i}.id`, 'a report id appears twice in this batch');
    ids.add(r.id);
  });
  const zone = await screenZone(db, reporter.screenId);
  const refused: PlaybackAck['refused'] = [];
  const refuse = (id: string, reason: PlaybackRefusal) => refused.push({ id, reason });

  const facts = new Map<string, RevisionFacts | undefined | null>();
  for (const r of reports) {
    if (facts.has(r.manifest_revision)) continue;
    const revision = manifestRevisionOf(reporter.screenId, r.manifest_revision);
    facts.set(
      r.manifest_revision,
      revision === undefined || revision > reporter.manifestRevision
        ? null
        : await revisionFacts(services, db, reporter.screenId, revision),
    );
  }
  const names = await contentNames(db, reporter.tenantId, [
    ...new Set(reports.map((r) => (r.media_id ?? r.application_id)!)),
  ]);

  const rows: PlaybackReportTable[] = [];
  for (const r of reports) {
    const contentId = (r.media_id ?? r.application_id)!;
    const startedAt = Date.parse(r.started_at);
    const endedAt = Math.min(Date.parse(r.ended_at), startedAt + PLAYBACK_SHOWING_MAX_MS);
    const revision = facts.get(r.manifest_revision);
    if (startedAt < now - PLAYBACK_REPORT_MAX_AGE_MS) refuse(r.id, 'too_old');
    else if (startedAt > now + PLAYBACK_CLOCK_SKEW_MS) refuse(r.id, 'in_future');
    else if (revision === null) refuse(r.id, 'unknown_manifest_revision');
    else if (!names.has(contentId) || (revision !== undefined && !revision.content.has(contentId)))
      refuse(r.id, 'not_in_manifest');
    else {
      // A stored manifest says which pages are adslots; a pruned one leaves it to the player's word.
      const slotKey = revision ? slotOf(revision, r.page_id, r.slot_key ?? null) : (r.slot_key ?? null);
      rows.push({
        screen_id: reporter.screenId,
        report_id: r.id,
        tenant_id: reporter.tenantId,
        manifest_revision: r.manifest_revision,
        page_id: r.page_id,
        placement_id: r.placement_id,
        slot_key: slotKey,
        content_id: contentId,
        started_at: startedAt,
        ended_at: endedAt,
        outcome: r.outcome,
        day: localDay(startedAt, revision ? revision.timezone : zone),
        received_at: now,
      });
    }
  }

  const fresh: PlaybackReportTable[] = [];
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    const inserted = await db
      .insertInto('playback_reports')
      .values(chunk)
      .onConflict((oc) => oc.columns(['screen_id', 'report_id']).doNothing())
      .returning('report_id')
      .execute();
    const added = new Set(inserted.map((r) => r.report_id));
    for (const row of chunk) if (added.has(row.report_id)) fresh.push(row);
  }
  await addToDays(db, reporter, fresh, names);
  return { counted: fresh.length, duplicates: rows.length - fresh.length, refused };
}

/** Adds newly counted showings to their rows, one upsert per (content, day). */
async function addToDays(
  db: Tx,
  reporter: PlaybackReporter,
  showings: readonly PlaybackReportTable[],
  names: ReadonlyMap<string, string>,
): Promise<void> {
  const groups = new Map<string, PlaybackDayTable>();
  for (const s of showings) {
    const key = `${s.content_id}\u0000${s.day}`;
    const complete = s.outcome === 'complete' ? 1 : 0;
    const g = groups.get(key);
    if (!g) {
      groups.set(key, {
        screen_id: reporter.screenId,
        content_id: s.content_id,
        day: s.day,
        tenant_id: reporter.tenantId,
        content_kind: s.content_id.startsWith('app_') ? 'application' : 'media',
        filename: names.get(s.content_id)!,
        play_count: 1,
        played_ms: s.ended_at - s.started_at,
        complete_count: complete,
        interrupted_count: 1 - complete,
        impression_count: s.slot_key === null ? 0 : 1,
        last_page_id: s.page_id,
        last_manifest_revision: s.manifest_revision,
        first_started_at: s.started_at,
        last_started_at: s.started_at,
      });
      continue;
    }
    g.play_count += 1;
    g.played_ms += s.ended_at - s.started_at;
    g.complete_count += complete;
    g.interrupted_count += 1 - complete;
    g.impression_count += s.slot_key === null ? 0 : 1;
    g.first_started_at = Math.min(g.first_started_at, s.started_at);
    if (s.started_at >= g.last_started_at) {
      g.last_started_at = s.started_at;
      g.last_page_id = s.page_id;
      g.last_manifest_revision = s.manifest_revision;
    }
  }
  for (const g of groups.values()) await upsertDay(db, g);
}

/** One row's upsert: sums add, first/last by start time, the filename is the newest known. */
export async function upsertDay(db: Tx, row: PlaybackDayTable): Promise<void> {
  const later = sql`excluded.last_started_at >= playback_days.last_started_at`;
  await db
    .insertInto('playback_days')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['screen_id', 'content_id', 'day']).doUpdateSet({
        filename: sql<string>`excluded.filename`,
        play_count: sql<number>`playback_days.play_count + excluded.play_count`,
        played_ms: sql<number>`playback_days.played_ms + excluded.played_ms`,
        complete_count: sql<number>`playback_days.complete_count + excluded.complete_count`,
        interrupted_count: sql<number>`playback_days.interrupted_count + excluded.interrupted_count`,
        impression_count: sql<number>`playback_days.impression_count + excluded.impression_count`,
        first_started_at: sql<number>`CASE WHEN excluded.first_started_at < playback_days.first_started_at THEN excluded.first_started_at ELSE playback_days.first_started_at END`,
        last_started_at: sql<number>`CASE WHEN ${later} THEN excluded.last_started_at ELSE playback_days.last_started_at END`,
        last_page_id: sql<string>`CASE WHEN ${later} THEN excluded.last_page_id ELSE playback_days.last_page_id END`,
        last_manifest_revision: sql<string>`CASE WHEN ${later} THEN excluded.last_manifest_revision ELSE playback_days.last_manifest_revision END`,
      }),
    )
    .execute();
}

/**
 * The reference contract's `playback.video_started` report (no id, no end): one more start of the
 * media, counted as it arrives (at most once per request; the contract gives no id to dedup by).
 */
export async function recordVideoStarted(
  db: Tx,
  reporter: { tenantId: string; screenId: string },
  start: { mediaId: string; pageId: string; manifestRevision: string },
  now: number,
): Promise<void> {
  const names = await contentNames(db, reporter.tenantId, [start.mediaId]);
  await upsertDay(db, {
    screen_id: reporter.screenId,
    content_id: start.mediaId,
    day: localDay(now, await screenZone(db, reporter.screenId)),
    tenant_id: reporter.tenantId,
    content_kind: 'media',
    filename: names.get(start.mediaId) ?? start.mediaId,
    play_count: 1,
    played_ms: 0,
    complete_count: 0,
    interrupted_count: 0,
    impression_count: 0,
    last_page_id: start.pageId,
    last_manifest_revision: start.manifestRevision,
    first_started_at: now,
    last_started_at: now,
  });
}

// ---- Reading

/** A filter naming a screen, media or application that is not the caller's is not_found, not an empty list. */
export async function checkPlaybackFilters(db: Db, tenantId: string, q: PlaybackQuery): Promise<void> {
  const owned = async (table: 'screens' | 'media' | 'applications', id: string | undefined, what: string) => {
    if (id === undefined) return;
    const row = await db
      .selectFrom(table)
      .select('id')
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!row) throw problem('not_found', `${what} ${id} not found`);
  };
  await owned('screens', q.screen_id, 'screen');
  await owned('media', q.media_id, 'media');
  await owned('applications', q.application_id, 'application');
}

interface Cursor {
  day: string;
  screen: string;
  content: string;
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.day, c.screen, c.content])).toString('base64url');
}

function decodeCursor(value: string): Cursor {
  try {
    const [day, screen, content] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    if (
      typeof day === 'string' &&
      typeof screen === 'string' &&
      typeof content === 'string' &&
      !`${day}${screen}${content}`.includes('\u0000') // no cursor of ours; PostgreSQL cannot compare it (D-471)
    )
      return { day, screen, content };
  } catch {
    // refused below
  }
  throw invalidField('cursor', 'is not a cursor this list gave');
}

function rowOf(r: PlaybackDayTable): PlaybackRow {
  const media = r.content_kind === 'media';
  return {
    screen_id: r.screen_id,
    media_id: media ? r.content_id : null,
    application_id: media ? null : r.content_id,
    filename: r.filename,
    day: r.day,
    play_count: Number(r.play_count),
    played_seconds: Math.round(Number(r.played_ms) / 1000),
    complete_count: Number(r.complete_count),
    interrupted_count: Number(r.interrupted_count),
    impression_count: Number(r.impression_count),
    last_page_id: r.last_page_id,
    last_manifest_revision: r.last_manifest_revision,
    first_started_at: new Date(Number(r.first_started_at)).toISOString(),
    last_started_at: new Date(Number(r.last_started_at)).toISOString(),
  };
}

/**
 * One page of the tenant's rows, newest day first (then screen, then content), after `cursor`.
 * Filters narrow the caller's own rows only: another tenant's screen or media id simply matches nothing
 * (the route answers not_found for a screen that is not the caller's).
 */
export async function listPlayback(
  db: Db,
  tenantId: string,
  query: PlaybackQuery,
  limit: number,
): Promise<{ items: PlaybackRow[]; next: string | null }> {
  let q = db.selectFrom('playback_days').selectAll().where('tenant_id', '=', tenantId);
  if (query.screen_id) q = q.where('screen_id', '=', query.screen_id);
  if (query.media_id) q = q.where('content_id', '=', query.media_id);
  if (query.application_id) q = q.where('content_id', '=', query.application_id);
  if (query.day) q = q.where('day', '=', query.day);
  if (query.from) q = q.where('day', '>=', query.from);
  if (query.to) q = q.where('day', '<=', query.to);
  if (query.cursor) {
    const c = decodeCursor(query.cursor);
    q = q.where((eb) =>
      eb.or([
        eb('day', '<', c.day),
        eb.and([eb('day', '=', c.day), eb('screen_id', '>', c.screen)]),
        eb.and([eb('day', '=', c.day), eb('screen_id', '=', c.screen), eb('content_id', '>', c.content)]),
      ]),
    );
  }
  const rows = await q
    .orderBy('day', 'desc')
    .orderBy('screen_id')
    .orderBy('content_id')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(rowOf),
    next:
      rows.length > limit && last
        ? encodeCursor({ day: last.day, screen: last.screen_id, content: last.content_id })
        : null,
  };
}

/** Forgets counted ids whose showings are past the acceptance window (a report that old is refused anyway). */
export async function pruneReports(services: Services, now: number): Promise<number> {
  const result = await services.store.db
    .deleteFrom('playback_reports')
    .where('started_at', '<', now - PLAYBACK_REPORT_MAX_AGE_MS)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
