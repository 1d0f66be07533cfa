// Screen presence in the shared database: a screen's runtime stream is held by one replica and
// its API readers may ask another. Each replica counts its own streams per screen in one row
// (screen, holder), by atomic increments, and keeps the rows with streams alive with a lease it
// renews; once its last stream of a screen closes the row stays online for the grace only. A
// replica that dies stops renewing, so its screens go offline when the lease runs out.
import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import { PRESENCE_GRACE_MS, type Disconnect, type ScreenPresence } from '../runtime/presence';
import type { Database } from '../store/schema';

/** How long a replica's streams count without a renewal: a dead replica's screens go offline after this. */
export const PRESENCE_LEASE_MS = 30_000;
/** Screens asked about per query (a fleet page asks for hundreds). */
const IDS_PER_QUERY = 500;
/** Rows whose lease or grace ended this long ago are deleted at a renewal. */
const KEEP_ENDED_MS = 60_000;

export class SharedPresence implements ScreenPresence {
  /** This process, as the holder of its rows. */
  readonly holder = `rep_${crypto.randomBytes(9).toString('base64url')}`;
  private renewTimer: NodeJS.Timeout | undefined;
  private held = 0;
  /** The clock's time at the last renewal. */
  private renewedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly leaseMs = PRESENCE_LEASE_MS,
    private readonly graceMs = PRESENCE_GRACE_MS,
  ) {}

  async connect(screenId: string): Promise<Disconnect> {
    const now = this.clock.now();
    this.held += 1;
    this.startRenewing();
    await this.quietly('connect', () =>
      sql`INSERT INTO screen_presence (screen_id, holder, streams, expires_at)
          VALUES (${screenId}, ${this.holder}, 1, ${now + this.leaseMs})
          ON CONFLICT (screen_id, holder) DO UPDATE SET
            streams = screen_presence.streams + 1, expires_at = excluded.expires_at`.execute(this.db),
    );
    let connected = true;
    return async () => {
      if (!connected) return;
      connected = false;
      this.held -= 1;
      const at = this.clock.now();
      // The last stream gone: online for the grace from now; others still open: the lease stands.
      await this.quietly('disconnect', () =>
        sql`UPDATE screen_presence SET
              streams = streams - 1,
              expires_at = CASE WHEN streams <= 1 THEN ${at + this.graceMs} ELSE expires_at END
            WHERE screen_id = ${screenId} AND holder = ${this.holder}`.execute(this.db),
      );
      if (this.held === 0) this.stopRenewing();
    };
  }

  async online(screenIds: readonly string[]): Promise<ReadonlySet<string>> {
    const online = new Set<string>();
    const now = this.clock.now();
    // The timer renews on wall time; a clock that moved further (a test's, or a stalled event
    // loop) must not make this replica's own screens look lapsed to itself.
    if (this.held > 0 && now - this.renewedAt >= this.leaseMs / 3) await this.renew();
    for (let i = 0; i < screenIds.length; i += IDS_PER_QUERY) {
      const rows = await this.db
        .selectFrom('screen_presence')
        .select('screen_id')
        .distinct()
        .where('screen_id', 'in', screenIds.slice(i, i + IDS_PER_QUERY))
        .where('expires_at', '>', now)
        .execute();
      for (const row of rows) online.add(row.screen_id);
    }
    return online;
  }

  /** Extends this replica's leases now (the timer does it every third of a lease). */
  async renew(): Promise<void> {
    const now = this.clock.now();
    this.renewedAt = now;
    await this.quietly('renew', async () => {
      await this.db
        .updateTable('screen_presence')
        .set({ expires_at: now + this.leaseMs })
        .where('holder', '=', this.holder)
        .where('streams', '>', 0)
        .execute();
      await this.db
        .deleteFrom('screen_presence')
        .where('expires_at', '<', now - KEEP_ENDED_MS)
        .execute();
    });
  }

  /**
   * Stops renewing and lets this replica's screens go offline after the grace, as if each of its
   * streams had closed (a replica that stops cleanly leaves nothing online for a whole lease).
   */
  async close(): Promise<void> {
    this.stopRenewing();
    const at = this.clock.now();
    await this.quietly('release its screens', () =>
      this.db
        .updateTable('screen_presence')
        .set({ streams: 0, expires_at: at + this.graceMs })
        .where('holder', '=', this.holder)
        .where('expires_at', '>', at + this.graceMs)
        .execute(),
    );
  }

  /** Stops renewing without releasing anything: what a replica that dies does (tests). */
  abandon(): void {
    this.stopRenewing();
  }

  private startRenewing(): void {
    if (this.renewTimer) return;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(1000, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref();
  }

  private stopRenewing(): void {
    clearInterval(this.renewTimer);
    this.renewTimer = undefined;
  }

  /** Presence is best effort: a failed write is logged, never a reason to refuse a stream. */
  private async quietly(what: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.logger.warn({ err: error }, `presence: could not ${what}`);
    }
  }
}
