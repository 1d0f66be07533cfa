import { sql, type Kysely } from 'kysely';
import { column } from '../columns';

// Issue 17, proof of play. `playback_reports` is the dedup record: every showing a player reported,
// by (screen, report id), kept while its start is within PLAYBACK_REPORT_MAX_AGE_MS (and with
// what the showing was, for per-slot reports later). `playback_days` replaces `playback_daily`:
// one row per screen, media or application, and screen-local day, with played time, outcomes and
// adslot impressions, and the filename copied in so a row outlives its media. The old rows move
// over (their UTC day kept; their filename from the media table).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('playback_reports')
    .addColumn('screen_id', 'text', (c) => c.notNull())
    .addColumn('report_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('manifest_revision', 'text', (c) => c.notNull())
    .addColumn('page_id', 'text', (c) => c.notNull())
    .addColumn('placement_id', 'text', (c) => c.notNull())
    .addColumn('slot_key', 'text')
    .addColumn('content_id', 'text', (c) => c.notNull())
    .addColumn('started_at', column.millis, (c) => c.notNull())
    .addColumn('ended_at', column.millis, (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('received_at', column.millis, (c) => c.notNull())
    .addPrimaryKeyConstraint('playback_reports_pk', ['screen_id', 'report_id'])
    .execute();
  await db.schema.createIndex('playback_reports_started').on('playback_reports').column('started_at').execute();

  await db.schema
    .createTable('playback_days')
    .addColumn('screen_id', 'text', (c) => c.notNull())
    .addColumn('content_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('content_kind', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('play_count', column.count, (c) => c.notNull())
    .addColumn('played_ms', column.millis, (c) => c.notNull())
    .addColumn('complete_count', column.count, (c) => c.notNull())
    .addColumn('interrupted_count', column.count, (c) => c.notNull())
    .addColumn('impression_count', column.count, (c) => c.notNull())
    .addColumn('last_page_id', 'text', (c) => c.notNull())
    .addColumn('last_manifest_revision', 'text', (c) => c.notNull())
    .addColumn('first_started_at', column.millis, (c) => c.notNull())
    .addColumn('last_started_at', column.millis, (c) => c.notNull())
    .addPrimaryKeyConstraint('playback_days_pk', ['screen_id', 'content_id', 'day'])
    .execute();
  // Newest days first per tenant (the list's order), and per content across screens (an advertiser's question).
  await db.schema
    .createIndex('playback_days_tenant')
    .on('playback_days')
    .columns(['tenant_id', 'day', 'screen_id', 'content_id'])
    .execute();
  await db.schema
    .createIndex('playback_days_content')
    .on('playback_days')
    .columns(['tenant_id', 'content_id', 'day'])
    .execute();

  await sql`
    INSERT INTO playback_days (screen_id, content_id, day, tenant_id, content_kind, filename, play_count,
      played_ms, complete_count, interrupted_count, impression_count, last_page_id, last_manifest_revision,
      first_started_at, last_started_at)
    SELECT d.screen_id, d.media_id, d.day, d.tenant_id, 'media', COALESCE(m.filename, d.media_id), d.play_count,
      0, 0, 0, 0, d.last_page_id, d.last_manifest_revision, d.first_started_at, d.last_started_at
    FROM playback_daily d LEFT JOIN media m ON m.id = d.media_id
  `.execute(db);
  await db.schema.dropTable('playback_daily').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
