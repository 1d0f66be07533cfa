// The runtime events the agent tells its renderer (a new manifest on disk, reloads and archive
// notices relayed from upstream, fleet commands later), with cursors the renderer resumes from.
// A cursor names this agent run (`<run>.<seq>`): after a restart, or past the kept window, the
// renderer gets stream.resync_required and refetches the manifest, as from the real runtime plane.
import crypto from 'node:crypto';

export interface LocalEvent {
  cursor: string;
  type: string;
  data: Record<string, unknown>;
}

/** Events kept for a renderer that reconnects (it needs seconds of history, not hours). */
const KEPT = 200;

export class LocalEvents {
  private readonly run = crypto.randomBytes(6).toString('base64url');
  private seq = 0;
  private readonly kept: LocalEvent[] = [];
  private readonly listeners = new Set<(event: LocalEvent) => void>();

  head(): string {
    return `${this.run}.${this.seq}`;
  }

  emit(type: string, data: Record<string, unknown> = {}): LocalEvent {
    const event = { cursor: `${this.run}.${++this.seq}`, type, data: { type, ...data } };
    this.kept.push(event);
    if (this.kept.length > KEPT) this.kept.shift();
    for (const listener of this.listeners) listener(event);
    return event;
  }

  /** Events after `cursor`, or `resync` when it is not a cursor of this run's kept window. */
  after(cursor: string | undefined): LocalEvent[] | 'resync' {
    if (cursor === undefined) return [];
    const match = /^([A-Za-z0-9_-]+)\.(\d+)$/.exec(cursor);
    if (!match || match[1] !== this.run) return 'resync';
    const seq = Number(match[2]);
    if (seq > this.seq) return 'resync';
    const oldest = this.kept[0] ? Number(this.kept[0].cursor.split('.')[1]) : this.seq + 1;
    if (seq < oldest - 1) return 'resync';
    return this.kept.filter((e) => Number(e.cursor.split('.')[1]) > seq);
  }

  subscribe(listener: (event: LocalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
