// The manifests the agent holds, in its database: the active one (on glass, last known good,
// played from disk at every boot), the next one (being mirrored; it becomes active only once all
// its content is on disk, so a swap never waits on the network), and a few old ones the renderer
// may still be showing for a moment.
import type { RuntimeManifest } from '../../sdk/contract/manifest';
import type { AgentDb } from './agent-db';

/** Old manifests kept after a swap (a renderer mid-transition still asks for their media). */
const OLD_KEPT = 3;

export interface HeldManifest {
  manifest: RuntimeManifest;
  /** Upstream's validator, for If-None-Match. */
  etag: string | null;
  role: 'active' | 'next' | 'old';
}

interface Row {
  revision: string;
  role: HeldManifest['role'];
  document: string;
}

function held(row: Row | undefined): HeldManifest | undefined {
  if (!row) return undefined;
  const stored = JSON.parse(row.document) as { manifest: RuntimeManifest; etag: string | null };
  return { manifest: stored.manifest, etag: stored.etag, role: row.role };
}

export class ManifestBook {
  constructor(
    private readonly db: AgentDb,
    private readonly now: () => number = Date.now,
  ) {}

  active(): HeldManifest | undefined {
    return held(this.db.prepare(`SELECT * FROM manifests WHERE role = 'active'`).get() as Row | undefined);
  }

  next(): HeldManifest | undefined {
    return held(this.db.prepare(`SELECT * FROM manifests WHERE role = 'next'`).get() as Row | undefined);
  }

  /** When the active manifest went on glass (ms since the epoch), or undefined before the first. */
  activeSince(): number | undefined {
    const row = this.db.prepare(`SELECT activated_at FROM manifests WHERE role = 'active'`).get() as
      | { activated_at: number | null }
      | undefined;
    return row?.activated_at ?? undefined;
  }

  byRevision(revision: string): HeldManifest | undefined {
    return held(this.db.prepare('SELECT * FROM manifests WHERE revision = ?').get(revision) as Row | undefined);
  }

  /** The manifests whose content must stay on disk. */
  needed(): RuntimeManifest[] {
    return [this.active(), this.next()].filter((m) => m !== undefined).map((m) => m.manifest);
  }

  /** Records a manifest fetched from upstream as the next one (replacing an unfinished next). */
  setNext(manifest: RuntimeManifest, etag: string | null): void {
    this.db.transaction(() => {
      this.db.prepare(`DELETE FROM manifests WHERE role = 'next'`).run();
      this.db
        .prepare(
          `INSERT INTO manifests (revision, role, document, received_at) VALUES (?, 'next', ?, ?)
           ON CONFLICT(revision) DO UPDATE SET role = 'next', document = excluded.document`,
        )
        .run(manifest.manifestRevision, JSON.stringify({ manifest, etag }), this.now());
    });
  }

  /** The same revision again with fresh capabilities: replace its document where it is. */
  refresh(manifest: RuntimeManifest, etag: string | null): void {
    this.db
      .prepare('UPDATE manifests SET document = ? WHERE revision = ?')
      .run(JSON.stringify({ manifest, etag }), manifest.manifestRevision);
  }

  /** The next manifest goes on glass; the active one becomes old; the oldest old ones go. */
  promoteNext(): HeldManifest | undefined {
    return this.db.transaction(() => {
      const next = this.next();
      if (!next) return undefined;
      this.db.prepare(`UPDATE manifests SET role = 'old' WHERE role = 'active'`).run();
      this.db
        .prepare(`UPDATE manifests SET role = 'active', activated_at = ? WHERE revision = ?`)
        .run(this.now(), next.manifest.manifestRevision);
      this.db
        .prepare(
          `DELETE FROM manifests WHERE role = 'old' AND revision NOT IN
             (SELECT revision FROM manifests WHERE role = 'old' ORDER BY activated_at DESC LIMIT ?)`,
        )
        .run(OLD_KEPT);
      return { ...next, role: 'active' as const };
    });
  }

  /** Forgets everything (the screen was deleted, or the device paired to another screen). */
  clear(): void {
    this.db.prepare('DELETE FROM manifests').run();
  }
}
