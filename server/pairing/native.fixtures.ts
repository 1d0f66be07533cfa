// Test helpers: a native device (an Ed25519 key) driving the native routes over HTTP, as a kiosk
// agent does, with proofs signed on the test clock.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import { NATIVE_PAIRING_SCHEME, NATIVE_SESSION_SCHEME, type HostFacts } from '../../sdk/contract/native';
import { keyIdOf, playerPublicKeyOf, signNativeProof } from '../../sdk/client/native-proof';
import type { PlayerPublicKey } from '../../sdk/contract/native';
import { randomKey, type TestResponse, type TestServer } from '../testing/harness';
import { claimCode, parseSse, type SseFrame } from './pairing.fixtures';

export class NativeDevice {
  pairingCredential: string | undefined;
  code: string | undefined;
  sessionCredential: string | undefined;

  private constructor(
    readonly server: TestServer,
    readonly privateKey: crypto.KeyObject,
    readonly publicKey: PlayerPublicKey,
    readonly kid: string,
    readonly host: HostFacts | undefined,
  ) {}

  static async create(server: TestServer, host?: HostFacts): Promise<NativeDevice> {
    const pair = crypto.generateKeyPairSync('ed25519');
    const publicKey = await playerPublicKeyOf(pair.publicKey);
    return new NativeDevice(server, pair.privateKey, publicKey, await keyIdOf(publicKey), host);
  }

  /** Proof signed on the server's test clock (or `nowMs`). */
  sign(op: 'pairing.complete' | 'session.mint' | 'identity.reset', nonce: string, nowMs?: number): Promise<string> {
    return signNativeProof(this.privateKey, { kid: this.kid, op, nonce, nowMs: nowMs ?? this.server.clock.now() });
  }

  startRequest(extra: { headers?: Record<string, string>; body?: unknown; path?: string } = {}): Promise<TestResponse> {
    return this.server.request('POST', extra.path ?? '/runtime/v1/native/pairing-sessions', {
      json: extra.body ?? { public_key: this.publicKey, ...(this.host ? { host: this.host } : {}) },
      headers: extra.headers,
    });
  }

  async start(): Promise<{ code: string; credential: string; body: any }> {
    const res = await this.startRequest();
    expect(res.status, res.text).toBe(201);
    this.pairingCredential = res.json().pairing_credential;
    this.code = res.json().code;
    return { code: this.code!, credential: this.pairingCredential!, body: res.json() };
  }

  pairingHeaders(): Record<string, string> {
    return { authorization: `${NATIVE_PAIRING_SCHEME} ${this.pairingCredential}` };
  }

  sessionHeaders(): Record<string, string> {
    return { authorization: `${NATIVE_SESSION_SCHEME} ${this.sessionCredential}` };
  }

  /** Reads the native pairing stream to its end (it ends after pairing.claimed). */
  events(headers = this.pairingHeaders()): Promise<{ status: number; frames: SseFrame[]; text: string }> {
    return readStream(this.server, '/runtime/v1/native/pairing-events', headers);
  }

  async completeRequest(nonce: string, signature?: string, publicKey = this.publicKey): Promise<TestResponse> {
    return this.server.request('POST', '/runtime/v1/native/pairing-sessions/complete', {
      headers: this.pairingHeaders(),
      json: {
        completion_nonce: nonce,
        public_key: publicKey,
        signature: signature ?? (await this.sign('pairing.complete', nonce)),
      },
    });
  }

  /** Waits for the claim on the stream and completes with a proof. */
  async complete(): Promise<any> {
    const stream = await this.events();
    expect(stream.status, stream.text).toBe(200);
    const nonce = stream.frames.find((f) => f.event === 'pairing.claimed')!.data.completion_nonce;
    const res = await this.completeRequest(nonce);
    expect(res.status, res.text).toBe(200);
    return res.json();
  }

  async challenge(op: 'session.mint' | 'identity.reset' = 'session.mint'): Promise<string> {
    const res = await this.server.request('POST', '/runtime/v1/native/identity/challenges', {
      json: { kid: this.kid, op },
    });
    expect(res.status, res.text).toBe(201);
    return res.json().nonce;
  }

  proofRequest(path: 'sessions' | 'reset', signature: string, publicKey = this.publicKey): Promise<TestResponse> {
    return this.server.request('POST', `/runtime/v1/native/identity/${path}`, {
      json: { kid: this.kid, public_key: publicKey, signature },
      idempotencyKey: path === 'sessions' ? randomKey() : undefined,
    });
  }

  /** A fresh Marquee-Session from a challenge and its proof. */
  async mintSession(): Promise<any> {
    const res = await this.proofRequest('sessions', await this.sign('session.mint', await this.challenge()));
    expect(res.status, res.text).toBe(201);
    this.sessionCredential = res.json().runtime_credential;
    return res.json();
  }

  /** Starts, has the owner claim the code, completes and mints a session: an active identity-bound screen. */
  async pair(token: string): Promise<any> {
    const { code } = await this.start();
    const claim = await claimCode(this.server, token, code);
    expect(claim.status, claim.text).toBe(201);
    const completion = await this.complete();
    await this.mintSession();
    return completion.screen;
  }

  /** A runtime or content request with the native session. */
  runtime(method: string, path: string, options: { headers?: Record<string, string>; json?: unknown } = {}) {
    return this.server.request(method, path, {
      ...options,
      headers: { ...this.sessionHeaders(), ...options.headers },
    });
  }
}

/** Reads a stream to its end, or what arrived within `ms` (streams that stay open). */
export function readStream(
  server: TestServer,
  path: string,
  headers: Record<string, string>,
  ms = 5_000,
): Promise<{ status: number; frames: SseFrame[]; text: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const req = server.rawRequest('GET', path, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      const finish = () => resolve({ status: res.statusCode!, frames: parseSse(text), text });
      res.on('end', finish);
      setTimeout(() => {
        finish();
        req.destroy();
      }, ms).unref();
    });
    req.on('error', reject);
  });
}
