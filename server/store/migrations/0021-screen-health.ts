import type { Kysely } from 'kysely';
import type { Engine } from '../driver';
import { binaryColumn, column } from '../columns';

// Issue 17, screenshots and screen health: one screenshot slot per screen (the current request and
// the last ready image, at most 2 MiB), and what the screen view tells of its health (the announced
// presence, the player, its observed surface, kiosk watchdog recoveries).
export async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('screen_screenshots')
    .addColumn('screen_id', 'text', (c) => c.primaryKey().references('screens.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('capture_id', 'text', (c) => c.notNull())
    .addColumn('requested_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('timed_out_at', column.millis)
    .addColumn('failure', 'text')
    .addColumn('ready_capture_id', 'text')
    .addColumn('method', 'text')
    .addColumn('width', column.bounded)
    .addColumn('height', column.bounded)
    .addColumn('bytes', column.count)
    .addColumn('sha256', 'text')
    .addColumn('captured_at', column.millis)
    .addColumn('image', binaryColumn(engine))
    .execute();
  await db.schema
    .createIndex('screen_screenshots_pending')
    .on('screen_screenshots')
    .columns(['timed_out_at', 'expires_at'])
    .execute();

  await db.schema
    .createTable('screen_health')
    .addColumn('screen_id', 'text', (c) => c.primaryKey().references('screens.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('presence', 'text')
    .addColumn('presence_changed_at', column.millis)
    .addColumn('offline_since', column.millis)
    .addColumn('player_kind', 'text')
    .addColumn('player_version', 'text')
    .addColumn('observation', 'text')
    .addColumn('recoveries', column.count, (c) => c.notNull().defaultTo(0))
    .addColumn('last_recovery_at', column.millis)
    .addColumn('last_recovery_reason', 'text')
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
