// The notifier of replicas sharing one PostgreSQL database: a publish wakes this process's
// listeners at once (as the in-process notifier does) and goes to every other replica by NOTIFY on
// one channel; a dedicated connection LISTENs and hands what the others published to the local
// listeners. NOTIFY is not durable: what was published while the listening connection was down is
// lost, so after a reconnect every waiting listener that reads its own position (event streams,
// the operation worker, pairing and agent streams) is woken once and reads what it missed.
import crypto from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../logger';
import { InProcessNotifier, type Listener, type Notifier } from '../notifier';

/** The one PostgreSQL channel every replica of an installation LISTENs on (NOTIFY is per database). */
export const NOTIFY_CHANNEL = 'marquee';
/** NOTIFY refuses payloads of 8,000 bytes or more; messages are packed into payloads below this. */
export const MAX_PAYLOAD_BYTES = 7000;

/** Publishes are gathered this long before they go out: other replicas hear of a commit this much later. */
export const COALESCE_MS = 5;

export interface Backoff {
  /** First wait after the listening connection was lost. */
  initialMs: number;
  /** Waits double up to this. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 100, maxMs: 5000 };

export interface PostgresNotifierOptions {
  /** The database the replicas share (MARQUEE_DATABASE_URL). */
  url: string;
  /** Sends one payload to every replica: `SELECT pg_notify(channel, payload)` over the store's pool. */
  notify(channel: string, payload: string): Promise<void>;
  logger: Logger;
  backoff?: Backoff;
  /**
   * Channels whose listeners may be woken with no message after a reconnect (they read what they
   * missed). Others carry an order ("end these streams", "cancel that upload") that must not be
   * given by accident; see wakeSafeChannel.
   */
  wakeSafe?: (channel: string) => boolean;
}

/**
 * Channels that say "something may have changed, look": everything except the ones that order an
 * end (`streams-end:…`, `upload-cancelled:…`).
 */
export function wakeSafeChannel(channel: string): boolean {
  return !channel.startsWith('streams-end:') && !channel.startsWith('upload-cancelled:');
}

interface Envelope {
  /** The publishing process, which has already delivered to its own listeners. */
  o: string;
  /** Channel and message pairs, in publish order. */
  m: [string, unknown][];
}

export class PostgresNotifier implements Notifier {
  private readonly local = new InProcessNotifier();
  private readonly origin = crypto.randomBytes(9).toString('base64url');
  private readonly backoff: Backoff;
  private readonly wakeSafe: (channel: string) => boolean;
  private outbox: [string, unknown][] = [];
  private flushing: Promise<void> | undefined;
  private client: pg.Client | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** Resolves each time the listening connection is (re)established; tests wait on it. */
  private connectedWaiters: (() => void)[] = [];
  /** Times the listening connection was re-established after a loss. */
  reconnects = 0;

  constructor(private readonly options: PostgresNotifierOptions) {
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.wakeSafe = options.wakeSafe ?? wakeSafeChannel;
  }

  /** Opens the listening connection; when it cannot, keeps trying in the background (never throws). */
  async start(): Promise<void> {
    await this.connect();
  }

  publish(channel: string, message?: unknown): void {
    this.local.publish(channel, message);
    if (this.closed) return;
    this.outbox.push([channel, message ?? null]);
    // Everything published within a few milliseconds (a 500-screen change: a thousand wake-ups; a
    // burst of small commits) goes in few NOTIFYs: each is a round trip the publisher pays.
    this.flushing ??= new Promise<void>((resolve) => setTimeout(resolve, COALESCE_MS)).then(() => this.flush());
  }

  subscribe(channel: string, listener: Listener): () => void {
    return this.local.subscribe(channel, listener);
  }

  /** Listeners of a channel in this process (tests: a closed stream unsubscribed). */
  subscriberCount(channel: string): number {
    return this.local.subscriberCount(channel);
  }

  /** The backend process id of the listening connection (tests terminate it). */
  get listenerPid(): number | undefined {
    return (this.client as unknown as { processID?: number } | undefined)?.processID;
  }

  /** Resolves when the listening connection is next established (or now, if it is up). */
  connected(): Promise<void> {
    if (this.client) return Promise.resolve();
    return new Promise((resolve) => this.connectedWaiters.push(resolve));
  }

  /** Waits until everything published so far has been handed to PostgreSQL. */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.settled();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async flush(): Promise<void> {
    const messages = this.outbox;
    this.outbox = [];
    try {
      for (const payload of packed(this.origin, messages)) {
        await this.options.notify(NOTIFY_CHANNEL, payload);
      }
    } catch (error) {
      // The commit stands; other replicas see it at their next wake-up for that scope.
      this.options.logger.warn({ err: error }, 'notifier: could not notify the other replicas');
    } finally {
      this.flushing = undefined;
      if (this.outbox.length > 0) this.flushing = this.flush();
    }
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.options.url, keepAlive: true });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => {});
      if (this.closed) return;
      this.options.logger.warn({ err: error }, 'notifier: the listening connection was lost; reconnecting');
      this.retryLater();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (notification) => {
      if (notification.channel === NOTIFY_CHANNEL && notification.payload) this.deliver(notification.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    if (lost || this.closed) {
      await client.end().catch(() => {});
      return;
    }
    const wasDown = this.failures > 0;
    this.failures = 0;
    this.client = client;
    for (const resolve of this.connectedWaiters.splice(0)) resolve();
    if (wasDown) {
      this.reconnects += 1;
      this.options.logger.info('notifier: listening again; waking every waiting reader to catch up');
      this.catchUp();
    }
  }

  private retryLater(): void {
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** this.failures);
    this.failures += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  /** Wakes, with no message, every listener that reads from its own position. */
  private catchUp(): void {
    for (const channel of this.local.channelNames()) {
      if (this.wakeSafe(channel)) this.local.publish(channel);
    }
  }

  private deliver(payload: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload) as Envelope;
    } catch {
      return;
    }
    if (envelope.o === this.origin || !Array.isArray(envelope.m)) return;
    for (const [channel, message] of envelope.m) {
      this.local.publish(channel, message === null ? undefined : message);
    }
  }
}

/** Splits messages into envelopes whose JSON stays under MAX_PAYLOAD_BYTES (a single larger message is dropped). */
export function packed(origin: string, messages: readonly [string, unknown][]): string[] {
  const payloads: string[] = [];
  const head = `{"o":${JSON.stringify(origin)},"m":[`;
  let parts: string[] = [];
  let size = head.length + 2;
  for (const message of messages) {
    const part = JSON.stringify(message);
    const bytes = Buffer.byteLength(part) + 1;
    if (head.length + 2 + bytes > MAX_PAYLOAD_BYTES) continue; // channel names and positions are short
    if (size + bytes > MAX_PAYLOAD_BYTES) {
      payloads.push(`${head}${parts.join(',')}]}`);
      parts = [];
      size = head.length + 2;
    }
    parts.push(part);
    size += bytes;
  }
  if (parts.length > 0) payloads.push(`${head}${parts.join(',')}]}`);
  return payloads;
}
