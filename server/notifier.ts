// Wakes open streams and idle workers when something commits. In process for one server; replicas
// sharing a PostgreSQL store use LISTEN/NOTIFY behind the same interface (replicas/postgres-notifier.ts).

export type Listener = (message: unknown) => void;

export interface Notifier {
  publish(channel: string, message?: unknown): void;
  /** Returns the unsubscribe function. */
  subscribe(channel: string, listener: Listener): () => void;
  /** Releases what the notifier holds (a listening connection); the server calls it when it stops. */
  close?(): Promise<void>;
}

export class InProcessNotifier implements Notifier {
  private readonly channels = new Map<string, Set<Listener>>();

  publish(channel: string, message?: unknown): void {
    const listeners = this.channels.get(channel);
    if (!listeners) return;
    for (const listener of [...listeners]) {
      try {
        listener(message);
      } catch {
        // A failing listener must not stop the others; it is the stream's job to log its own errors.
      }
    }
  }

  subscribe(channel: string, listener: Listener): () => void {
    let listeners = this.channels.get(channel);
    if (!listeners) this.channels.set(channel, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) this.channels.delete(channel);
    };
  }

  /** Channels with at least one listener. */
  channelNames(): string[] {
    return [...this.channels.keys()];
  }

  subscriberCount(channel: string): number {
    return this.channels.get(channel)?.size ?? 0;
  }
}
