// Open file descriptors of a local blob store, shared by the requests that read the same object and
// kept between them: a 64 KiB range costs one positional read instead of open, read and close (three
// thread-pool round trips). Objects are immutable once written; whatever replaces or removes one
// (rename over it, delete, a republished tree) invalidates its entry, and a descriptor is closed
// only once no read holds it, so a read never lands on a reused descriptor number.
import fs from 'node:fs';
import type { OpenBlob } from './blob-store';

/** Descriptors held open at most; past this the least recently used idle one closes. */
export const MAX_OPEN_DESCRIPTORS = 128;
/** An idle descriptor closes after this long (checked as descriptors are asked for). */
export const DESCRIPTOR_IDLE_MS = 60_000;

interface Entry {
  key: string;
  fd: Promise<number>;
  /** The descriptor once `fd` resolved. */
  openFd?: number;
  /** Reads in progress (acquired, not yet released). */
  holders: number;
  lastUsed: number;
  /** Invalidated or evicted: closes when the last holder releases it, and is never handed out again. */
  retired: boolean;
}

export class DescriptorCache {
  /** Map order is recency: an entry is moved to the end whenever it is handed out. */
  private readonly entries = new Map<string, Entry>();
  private lastSweep = 0;

  constructor(
    private readonly maxOpen = MAX_OPEN_DESCRIPTORS,
    private readonly idleMs = DESCRIPTOR_IDLE_MS,
  ) {}

  /** Descriptors open or opening now (tests: the cache stays bounded and closes what it retires). */
  get size(): number {
    return this.entries.size;
  }

  async acquire(key: string, file: string): Promise<OpenBlob> {
    const now = Date.now();
    this.sweep(now);
    let entry = this.entries.get(key);
    if (entry) this.entries.delete(key);
    else {
      const opening: Entry = { key, fd: openForReading(file), holders: 0, lastUsed: now, retired: false };
      entry = opening;
      opening.fd.then(
        (fd) => {
          opening.openFd = fd;
        },
        // An object that cannot be opened (absent) is not kept.
        () => {
          if (this.entries.get(key) === opening) this.entries.delete(key);
          opening.retired = true;
        },
      );
    }
    this.entries.set(key, entry);
    entry.holders++;
    entry.lastUsed = now;
    this.evict();
    const held = entry;
    // A descriptor already open is handed out without waiting a turn for its promise.
    if (held.openFd !== undefined) return new Handle(held, held.openFd);
    try {
      return new Handle(held, await held.fd);
    } catch (error) {
      held.holders--;
      throw error;
    }
  }

  /** The object at `key`, or every object below `key/`, changed or went away: never hand out its descriptor again. */
  invalidate(key: string): void {
    for (const entry of [...this.entries.values()]) {
      if (entry.key === key || entry.key.startsWith(`${key}/`)) this.retire(entry);
    }
  }

  private retire(entry: Entry): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    if (entry.retired) return;
    entry.retired = true;
    if (entry.holders === 0) close(entry);
  }

  /** Least recently used idle descriptors go first; held ones are skipped (and closed on release). */
  private evict(): void {
    if (this.entries.size <= this.maxOpen) return;
    for (const entry of this.entries.values()) {
      if (this.entries.size <= this.maxOpen) return;
      if (entry.holders === 0) this.retire(entry);
    }
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.idleMs / 4) return;
    this.lastSweep = now;
    for (const entry of [...this.entries.values()]) {
      if (entry.holders === 0 && now - entry.lastUsed >= this.idleMs) this.retire(entry);
    }
  }
}

/**
 * One use of an entry: reads on its descriptor until released. A class, not an object of closures:
 * one is made for every range served.
 */
class Handle implements OpenBlob {
  private released = false;

  constructor(
    private readonly entry: Entry,
    private readonly fd: number,
  ) {}

  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    return new Promise((resolve, reject) =>
      fs.read(this.fd, buffer, offset, length, position, (error, bytesRead) =>
        error ? reject(error) : resolve(bytesRead),
      ),
    );
  }

  readSync(buffer: Buffer, offset: number, length: number, position: number): number {
    return fs.readSync(this.fd, buffer, offset, length, position);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const entry = this.entry;
    entry.holders--;
    entry.lastUsed = Date.now();
    if (entry.retired && entry.holders === 0) close(entry);
  }
}

function openForReading(file: string): Promise<number> {
  return new Promise((resolve, reject) => fs.open(file, 'r', (error, fd) => (error ? reject(error) : resolve(fd))));
}

function close(entry: Entry): void {
  entry.fd.then(
    (fd) => fs.close(fd, () => {}),
    () => {},
  );
}
