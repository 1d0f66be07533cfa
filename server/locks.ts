// Named locks held while one piece of work runs, so a duplicate waits for it or is refused instead
// of running alongside it: one request per idempotency record, one PUT per signed upload URL. In
// process memory by default; replicas sharing a store need a shared implementation of the same
// interface (PostgreSQL advisory locks, a Redis lease), which is why every step is asynchronous.

/** Gives the lock back; calling it again does nothing. */
export type Unlock = () => Promise<void>;

export interface Locks {
  /**
   * Holds `name` once nobody else does, waiting at most `waitMs` for the holder (0: only when it is
   * free now). Resolves with the unlock, or with undefined when the lock stayed held.
   */
  acquire(name: string, waitMs: number): Promise<Unlock | undefined>;
}

export class MemoryLocks implements Locks {
  /** Held names, each with a promise that settles when it is given back. */
  private readonly held = new Map<string, Promise<void>>();

  async acquire(name: string, waitMs: number): Promise<Unlock | undefined> {
    const deadline = Date.now() + waitMs;
    for (let holder = this.held.get(name); holder; holder = this.held.get(name)) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return undefined;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([holder, new Promise<void>((resolve) => (timer = setTimeout(resolve, remaining)))]);
      clearTimeout(timer);
    }
    // Nothing awaits between the check above and this claim: two callers cannot both get here.
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.held.set(name, mine);
    return async () => {
      if (this.held.get(name) === mine) this.held.delete(name);
      release();
    };
  }

  /** Names held now (tests: nothing stays held). */
  get size(): number {
    return this.held.size;
  }
}
