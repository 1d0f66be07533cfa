// Numbered migrations, applied in name order at start. Never change what a shipped one does to a
// database; add the next (the 64-bit column types of issue 13 changed no SQLite database: see
// docs/decisions.md). Numbers are allotted per feature (0003 events, 0004 applications, 0005 media,
// 0006 screens and playlists, 0007 runtime, 0008 and 0009 review fixes, 0012 to 0015 people and
// access), so features developed side by side do not collide.
import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../driver';
import * as m0001 from './0001-foundation';
import * as m0002 from './0002-content';
import * as m0003 from './0003-events';
import * as m0006 from './0006-screens-playlists';
import * as m0005 from './0005-media';
import * as m0004 from './0004-applications';
import * as m0007 from './0007-runtime';
import * as m0008 from './0008-operation-leases';
import * as m0009 from './0009-idempotency-body-erasure';
import * as m0010 from './0010-kv-revision-floors';
import * as m0012 from './0012-people';
import * as m0013 from './0013-invitations';
import * as m0014 from './0014-agents';
import * as m0015 from './0015-operators';
import * as m0016 from './0016-native-identity';
import * as m0017 from './0017-screen-sync-groups';
import * as m0018 from './0018-fleet-control';
import * as m0019 from './0019-feedback';
import * as m0024 from './0024-comments';
import * as m0025 from './0025-browser-links';
import * as m0026 from './0026-replica-state';
import * as m0027 from './0027-playing-playlist';
import * as m0020 from './0020-proof-of-play';
import * as m0021 from './0021-screen-health';
import * as m0022 from './0022-event-actors';

/** A migration module: `up` may ask which engine it runs on (column types that differ per engine). */
interface EngineMigration {
  up(db: Kysely<unknown>, engine: Engine): Promise<void>;
  down?(db: Kysely<unknown>): Promise<void>;
}

const modules: Record<string, EngineMigration> = {
  '0001-foundation': m0001,
  '0002-content': m0002,
  '0003-events': m0003,
  '0006-screens-playlists': m0006,
  '0005-media': m0005,
  '0004-applications': m0004,
  '0007-runtime': m0007,
  '0008-operation-leases': m0008,
  '0009-idempotency-body-erasure': m0009,
  '0010-kv-revision-floors': m0010,
  '0012-people': m0012,
  '0013-invitations': m0013,
  '0014-agents': m0014,
  '0015-operators': m0015,
  '0016-native-identity': m0016,
  '0017-screen-sync-groups': m0017,
  // 0011-0017 are allotted to features landing from other branches (unordered migrations allowed).
  '0018-fleet-control': m0018,
  '0019-feedback': m0019,
  '0020-proof-of-play': m0020,
  '0021-screen-health': m0021,
  '0022-event-actors': m0022,
  // 0023 was allotted to the kiosk, which needed none (unordered migrations are allowed).
  '0024-comments': m0024,
  '0025-browser-links': m0025,
  '0026-replica-state': m0026,
  '0027-playing-playlist': m0027,
};

/** Every migration by name, bound to the engine it will run on, as Kysely's Migrator takes them. */
export function migrationsFor(engine: Engine): Record<string, Migration> {
  return Object.fromEntries(
    Object.entries(modules).map(([name, m]) => [name, { up: (db) => m.up(db, engine), down: m.down }]),
  );
}

export const migrationNames: readonly string[] = Object.keys(modules);
