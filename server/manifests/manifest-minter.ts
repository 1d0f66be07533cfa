// The group commit of manifest mints in this process: the first fetches that arrive together (a
// fleet's players after one playlist edit) wait for one batch, and requests that arrive while a
// batch runs go into the next. What a batch does is minting.ts's; this file only schedules. Each
// replica batches its own requests: a revision two replicas mint at once is stored once.
import type { StoredManifest } from './manifest-compose';

/** A stored manifest revision of one screen, its document parsed. */
export interface ManifestRecord {
  screenId: string;
  revision: number;
  stored: StoredManifest;
  hasCapabilities: boolean;
  supersededAt: number | null;
}

/** One screen's result of a batch: its record, or the error its fetch answers with. */
export type MintOutcome = { ok: true; record: ManifestRecord } | { ok: false; error: unknown };

export interface ManifestMinter {
  /** The screen's current manifest, minted together with whatever other screens are asked for meanwhile. */
  mint(screenId: string): Promise<ManifestRecord>;
}

interface Waiter {
  resolve(record: ManifestRecord): void;
  reject(error: unknown): void;
}

export class GroupCommitMinter implements ManifestMinter {
  private readonly waiting = new Map<string, Waiter[]>();
  private draining: Promise<void> | null = null;

  constructor(
    /** Screens one batch takes at most (each batch is one transaction, which holds SQLite's one writer). */
    private readonly batchSize: number,
    /** Mints these screens in one transaction; an outcome for each. */
    private readonly mintBatch: (screenIds: string[]) => Promise<Map<string, MintOutcome>>,
  ) {}

  mint(screenId: string): Promise<ManifestRecord> {
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(screenId) ?? [];
      waiters.push({ resolve, reject });
      this.waiting.set(screenId, waiters);
      this.draining ??= this.drain().finally(() => (this.draining = null));
    });
  }

  private async drain(): Promise<void> {
    // Let requests that arrived in the same turn join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.waiting.size > 0) {
      const batch = [...this.waiting.keys()].slice(0, this.batchSize);
      const waiters = batch.map((id) => [id, this.waiting.get(id)!] as const);
      for (const id of batch) this.waiting.delete(id);
      let outcomes: Map<string, MintOutcome>;
      try {
        outcomes = await this.mintBatch(batch);
      } catch (error) {
        outcomes = new Map(batch.map((id) => [id, { ok: false, error }]));
      }
      for (const [id, list] of waiters) {
        const outcome = outcomes.get(id)!;
        for (const w of list) outcome.ok ? w.resolve(outcome.record) : w.reject(outcome.error);
      }
    }
  }
}
