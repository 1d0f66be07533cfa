// The agent's side of the real runtime plane, over the one runtime client (sdk/client/runtime.ts):
// native pairing from the device key, and the `Marquee-Session` minted from possession proofs and
// renewed before it lapses. The credential lives in this object only: never on disk, never in the
// renderer.
import type { HostFacts, NativeRuntimeSession } from '../../sdk/contract/native';
import type { PairingCompletion } from '../../sdk/contract/screens';
import { MarqueeProblem } from '../../sdk/client/problem';
import { RuntimeClient } from '../../sdk/client/runtime';
import type { EventStream, StreamMessage } from '../../sdk/sse/event-stream-client';
import type { DeviceIdentity } from './identity';

/** Mint a new session this long before the current one lapses (sessions last 24 h). */
export const SESSION_RENEW_MARGIN_MS = 60 * 60_000;
/** Upstream calls settle within this (a kiosk on a dead uplink must fall back to its mirror quickly). */
export const UPSTREAM_CALL_TIMEOUT_MS = 15_000;

export interface PendingPairing {
  code: string;
  credential: string;
  expiresAt: number;
}

/** The key no longer identifies a screen upstream (reset, retired, or the screen is gone). */
export class EnrollmentLost extends Error {
  constructor() {
    super('upstream no longer knows this device key');
    this.name = 'EnrollmentLost';
  }
}

export class Upstream {
  readonly client: RuntimeClient;
  private session: { credential: string; expiresAt: number; body: NativeRuntimeSession } | undefined;
  private minting: Promise<NativeRuntimeSession> | undefined;

  constructor(
    readonly origin: string,
    private readonly identity: DeviceIdentity,
    options: {
      fetch?: typeof fetch;
      now?: () => number;
      callTimeoutMs?: number;
      /** Each minted session (what it says of the screen now, such as its display state). */
      onSession?: (session: NativeRuntimeSession) => void;
      /** Each answer's Date header and the local instant it was received around (clock skew). */
      onServerDate?: (serverMs: number, localMs: number) => void;
    } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.onSession = options.onSession;
    this.client = new RuntimeClient({
      runtimeOrigin: origin,
      fetch: options.fetch,
      callTimeoutMs: options.callTimeoutMs ?? UPSTREAM_CALL_TIMEOUT_MS,
      headers: () => this.credentialHeaders(),
      onServerDate: options.onServerDate,
    });
  }

  /** The session's credential header (none before a session is minted): for calls made outside the client. */
  credentialHeaders(): Record<string, string> {
    return this.session ? { authorization: `Marquee-Session ${this.session.credential}` } : {};
  }

  private readonly now: () => number;
  private readonly onSession: ((session: NativeRuntimeSession) => void) | undefined;

  /** Which session is current (compared, never sent anywhere): capabilities belong to the session they came with. */
  get sessionMark(): number {
    return this.session?.expiresAt ?? 0;
  }

  get hasSession(): boolean {
    return this.session !== undefined && this.session.expiresAt > this.now();
  }

  /** Starts native pairing; the code goes on glass, the credential stays here. */
  async startPairing(host: HostFacts): Promise<PendingPairing> {
    const started = await this.client.startNativePairing({ public_key: this.identity.publicKey, host });
    return { code: started.code, credential: started.pairing_credential, expiresAt: Date.parse(started.expires_at) };
  }

  /** Follows the pairing stream; resolves with the completion nonce once an owner claimed the code. */
  waitForClaim(pairing: PendingPairing, signal: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      let stream: EventStream | undefined;
      const onEvent = (message: StreamMessage) => {
        const nonce = (message.data as { completion_nonce?: unknown } | undefined)?.completion_nonce;
        if (message.type === 'pairing.claimed' && typeof nonce === 'string') {
          stream?.close();
          resolve(nonce);
        }
      };
      stream = this.client.nativePairingEvents(pairing.credential, { signal, onEvent, maxDelayMs: 5_000 });
      stream.done.then(() => reject(signal.reason ?? new Error('the pairing stream ended')), reject);
    });
  }

  /** Proves the key over the claim's nonce; the key becomes the screen's identity. */
  async completePairing(pairing: PendingPairing, nonce: string): Promise<PairingCompletion> {
    return this.client.completeNativePairing(pairing.credential, {
      completion_nonce: nonce,
      public_key: this.identity.publicKey,
      signature: await this.identity.sign('pairing.complete', nonce),
    });
  }

  /** A current session, minted (once at a time) from a fresh proof when there is none or it lapses soon. */
  async ensureSession(): Promise<NativeRuntimeSession> {
    if (this.session && this.session.expiresAt - SESSION_RENEW_MARGIN_MS > this.now()) return this.session.body;
    this.minting ??= this.mint().finally(() => (this.minting = undefined));
    return this.minting;
  }

  /** Forgets the session (upstream refused it): the next call mints another. */
  dropSession(): void {
    this.session = undefined;
  }

  private async mint(): Promise<NativeRuntimeSession> {
    try {
      const challenge = await this.client.nativeChallenge({ kid: this.identity.kid, op: 'session.mint' });
      const body = await this.client.nativeSession({
        kid: this.identity.kid,
        public_key: this.identity.publicKey,
        signature: await this.identity.sign('session.mint', challenge.nonce),
      });
      // A 24-hour credential; judged on the local clock from now (the device clock may be off).
      this.session = { credential: body.runtime_credential, expiresAt: this.now() + 24 * 3600_000, body };
      this.onSession?.(body);
      return body;
    } catch (error) {
      if (error instanceof MarqueeProblem && (error.status === 404 || error.status === 401)) throw new EnrollmentLost();
      throw error;
    }
  }

  /** Runs an authenticated call; a refused session is minted again once. */
  async withSession<T>(call: () => Promise<T>): Promise<T> {
    await this.ensureSession();
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof MarqueeProblem) || error.status !== 401) throw error;
      this.dropSession();
      await this.ensureSession();
      return call();
    }
  }

  /** Unbinds the key upstream and tombstones its screen. */
  async reset(): Promise<void> {
    const challenge = await this.client.nativeChallenge({ kid: this.identity.kid, op: 'identity.reset' });
    await this.client.nativeReset({
      kid: this.identity.kid,
      public_key: this.identity.publicKey,
      signature: await this.identity.sign('identity.reset', challenge.nonce),
    });
    this.dropSession();
  }
}
