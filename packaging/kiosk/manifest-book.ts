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
  /** When it went on glass (ms since the epoch); null for one that never did. */
  activatedAt: number | null;
}

interface Row {
  revision: string;
  role: HeldManifest['role'];
  document: string;
  activated_at: number | null;
}

/** Parsed documents kept: the active, next and old manifests with room to spare. */
const PARSED_KEPT = 8;

/** A stored document as parsed, frozen: every caller shares it, so none may change it. */
interface Parsed {
  document: string;
  manifest: RuntimeManifest;
  etag: string | null;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export class ManifestBook {
  /**
   * Documents parsed before, by revision: the status and every media or package request of the
   * renderer look a manifest up, and parsing its JSON each time cost more than reading its row.
   * An entry is used only while the row's document is the same text (a refresh replaces it).
   */
  private readonly parsed = new Map<string, Parsed>();

  constructor(
    private readonly db: AgentDb,
    private readonly now: () => number = Date.now,
  ) {}

  private held(row: Row | undefined): HeldManifest | undefined {
    if (!row) return undefined;
    let parsed = this.parsed.get(row.revision);
    if (parsed?.document !== row.document) {
      const stored = JSON.parse(row.document) as { manifest: RuntimeManifest; etag: string | null };
      parsed = { document: row.document, manifest: deepFreeze(stored.manifest), etag: stored.etag };
      this.parsed.delete(row.revision);
      this.parsed.set(row.revision, parsed);
      if (this.parsed.size > PARSED_KEPT) this.parsed.delete(this.parsed.keys().next().value!);
    }
    return { manifest: parsed.manifest, etag: parsed.etag, role: row.role, activatedAt: row.activated_at };
  }

  active(): HeldManifest | undefined {
    return this.held(this.db.prepare(`SELECT * FROM manifests WHERE role = 'active'`).get() as Row | undefined);
  }

  next(): HeldManifest | undefined {
    return this.held(this.db.prepare(`SELECT * FROM manifests WHERE role = 'next'`).get() as Row | undefined);
  }

  byRevision(revision: string): HeldManifest | undefined {
    return this.held(this.db.prepare('SELECT * FROM manifests WHERE revision = ?').get(revision) as Row | undefined);
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
      const activatedAt = this.now();
      this.db
        .prepare(`UPDATE manifests SET role = 'active', activated_at = ? WHERE revision = ?`)
        .run(activatedAt, next.manifest.manifestRevision);
      this.db
        .prepare(
          `DELETE FROM manifests WHERE role = 'old' AND revision NOT IN
             (SELECT revision FROM manifests WHERE role = 'old' ORDER BY activated_at DESC LIMIT ?)`,
        )
        .run(OLD_KEPT);
      return { ...next, role: 'active' as const, activatedAt };
    });
  }

  /** Forgets everything (the screen was deleted, or the device paired to another screen). */
  clear(): void {
    this.db.prepare('DELETE FROM manifests').run();
    this.parsed.clear();
  }
}
