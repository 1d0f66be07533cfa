// Replicas on one PostgreSQL database tell each other of the writes their short-lived caches watch
// (revocations, suspensions, a deleted media, a superseded manifest): each watched write this
// process makes goes out on the notifier, and each one another replica made runs this process's
// watchers, so its caches drop the rows within a second (watched-cache.ts's settle time) instead of
// their lifetime (D-386). Writes are gathered for one turn of the event loop, one message per table
// and columns.
import crypto from 'node:crypto';
import type { Notifier } from '../notifier';
import type { Store } from '../store/store';

/** The notifier channel of watched writes (wake-safe: a reconnect delivers it with no message). */
export const WATCHED_WRITES_CHANNEL = 'watched-writes';

interface WatchedWrite {
  /** The replica that made the write (its own watchers already ran). */
  o: string;
  t: string;
  /** The columns set (null: a column not named), or null for a delete. */
  c: (string | null)[] | null;
}

export function relayWatchedWrites(store: Store, notifier: Notifier): () => void {
  const origin = crypto.randomBytes(9).toString('base64url');
  let pending = new Map<string, WatchedWrite>();
  const flush = () => {
    const writes = pending;
    pending = new Map();
    for (const write of writes.values()) notifier.publish(WATCHED_WRITES_CHANNEL, write);
  };
  store.relayWatchedWrites((table, columns) => {
    const c = columns ? columns.map((name) => name ?? null) : null;
    if (pending.size === 0) setImmediate(flush);
    pending.set(`${table}\u0000${c?.join('\u0000') ?? ''}`, { o: origin, t: table, c });
  });
  return notifier.subscribe(WATCHED_WRITES_CHANNEL, (message) => {
    // No message: the listening connection was lost and is back; writes may have been missed.
    if (message === undefined || message === null) return store.replayAllWatchedWrites();
    const write = message as Partial<WatchedWrite>;
    if (write.o === origin || typeof write.t !== 'string') return;
    store.replayWatchedWrite(write.t, Array.isArray(write.c) ? write.c.map((name) => name ?? undefined) : 'delete');
  });
}
