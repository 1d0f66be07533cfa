// Connecting an agent installation to a project, from the agent's side: make an X25519 key pair
// (its private half never leaves this process), ask for a connection, show the person the code and
// the approval URL, follow the status stream until a member decides, collect the sealed credential,
// open it with the private key (X25519 + HKDF-SHA-256 + AES-256-GCM, WebCrypto), and activate the
// bearer inside. Node (20+) and browsers alike; no server code.
import { createParser } from 'eventsource-parser';
import {
  AGENT_CONNECT_SCHEME,
  AGENT_ENVELOPE_ALG,
  AGENT_ENVELOPE_INFO,
  AGENT_STREAM_FINAL_STATES,
  type Agent,
  type AgentConnection,
  type AgentConnectionRequest,
  type AgentConnectionStart,
  type AgentCredential,
  type AgentCredentialCollection,
  type AgentCredentialEnvelope,
  type X25519PublicJwk,
} from '../contract/agents';
import { MarqueeProblem, type ProblemDocument } from './problem';

export interface AgentConnectionOptions {
  /** Control-plane origin, e.g. http://localhost:8080. */
  baseUrl: string;
  fetch?: typeof fetch;
}

export interface RecipientKey {
  publicJwk: X25519PublicJwk;
  /** Not extractable unless asked for: it derives the envelope's key and nothing reads it out. */
  privateKey: CryptoKey;
}

/** The envelope does not open with this key (another key, or a changed envelope). */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
}

const subtle = () => globalThis.crypto.subtle;

/** `extractable` lets an agent store the private key (as a JWK) to collect after a restart. */
export async function generateRecipientKey(options: { extractable?: boolean } = {}): Promise<RecipientKey> {
  const pair = (await subtle().generateKey({ name: 'X25519' }, options.extractable ?? false, [
    'deriveBits',
  ])) as CryptoKeyPair;
  const jwk = await subtle().exportKey('jwk', pair.publicKey);
  return { publicJwk: { kty: 'OKP', crv: 'X25519', x: jwk.x! }, privateKey: pair.privateKey };
}

function base64url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(text.length / 4) * 4, '=');
  const binary = atob(b64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Opens the envelope with the recipient's private key; EnvelopeError with any other key. */
export async function openEnvelope(
  envelope: AgentCredentialEnvelope,
  connectionId: string,
  privateKey: CryptoKey,
): Promise<AgentCredential> {
  if (envelope.alg !== AGENT_ENVELOPE_ALG) throw new EnvelopeError(`unknown envelope algorithm ${envelope.alg}`);
  try {
    const epk = await subtle().importKey(
      'jwk',
      { kty: 'OKP', crv: 'X25519', x: envelope.epk.x },
      { name: 'X25519' },
      false,
      [],
    );
    const shared = await subtle().deriveBits({ name: 'X25519', public: epk }, privateKey, 256);
    const hkdf = await subtle().importKey('raw', shared, 'HKDF', false, ['deriveKey']);
    const key = await subtle().deriveKey(
      {
        name: 'HKDF',
        hash: 'SHA-256',
        salt: base64url(envelope.salt),
        info: new TextEncoder().encode(AGENT_ENVELOPE_INFO),
      },
      hkdf,
      { name: 'AES-GCM', length: 256 },
      false,
      ['decrypt'],
    );
    const plaintext = await subtle().decrypt(
      { name: 'AES-GCM', iv: base64url(envelope.nonce), additionalData: new TextEncoder().encode(connectionId) },
      key,
      base64url(envelope.ciphertext),
    );
    return JSON.parse(new TextDecoder().decode(plaintext)) as AgentCredential;
  } catch (error) {
    throw new EnvelopeError(`the envelope does not open with this key: ${(error as Error).message}`);
  }
}

async function call<T>(options: AgentConnectionOptions, path: string, init: RequestInit): Promise<T> {
  const res = await (options.fetch ?? fetch)(new URL(path, options.baseUrl), init);
  const text = await res.text();
  const body = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) throw new MarqueeProblem(res.status, (body ?? {}) as Partial<ProblemDocument>);
  return body as T;
}

const json = { 'Content-Type': 'application/json', Accept: 'application/json' };

/** Asks for a connection. The request carries no credential of any kind: it is its own. */
export function requestConnection(
  options: AgentConnectionOptions,
  request: Omit<AgentConnectionRequest, 'recipient_public_key'>,
  key: RecipientKey,
): Promise<AgentConnectionStart> {
  return call(options, '/api/v1/agent-connections', {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ ...request, recipient_public_key: key.publicJwk }),
  });
}

const connectHeader = (start: AgentConnectionStart) => ({
  Authorization: `${AGENT_CONNECT_SCHEME} ${start.connect_token}`,
});

/**
 * Follows the status stream until the connection reaches a state the stream ends on (approved,
 * denied, cancelled, connected, expired), reconnecting after a dropped connection; calls `onChange`
 * with every state it sees and resolves with the last.
 */
export async function waitForDecision(
  options: AgentConnectionOptions,
  start: AgentConnectionStart,
  onChange: (connection: AgentConnection) => void = () => {},
  signal?: AbortSignal,
): Promise<AgentConnection> {
  for (let attempt = 0; ; attempt++) {
    let last: AgentConnection | undefined;
    const res = await (options.fetch ?? fetch)(start.events_url, {
      headers: { ...connectHeader(start), Accept: 'text/event-stream' },
      signal,
    });
    if (!res.ok || !res.body) {
      const text = await res.text();
      throw new MarqueeProblem(res.status, text ? (JSON.parse(text) as Partial<ProblemDocument>) : {});
    }
    const parser = createParser({
      onEvent(message) {
        if (message.event !== 'agent_connection') return;
        last = JSON.parse(message.data) as AgentConnection;
        onChange(last);
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
      parser.feed(decoder.decode(chunk, { stream: true }));
    const final = last as AgentConnection | undefined;
    if (final && AGENT_STREAM_FINAL_STATES.includes(final.state)) return final;
    if (signal?.aborted) throw signal.reason;
    await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 1000 * 2 ** attempt)));
  }
}

export function collectEnvelope(
  options: AgentConnectionOptions,
  start: AgentConnectionStart,
): Promise<AgentCredentialCollection> {
  return call(options, start.credential_url, {
    method: 'POST',
    headers: { ...connectHeader(start), Accept: 'application/json' },
  });
}

export function cancelConnection(options: AgentConnectionOptions, start: AgentConnectionStart): Promise<void> {
  return call(options, `/api/v1/agent-connections/${encodeURIComponent(start.connection.id)}/cancel`, {
    method: 'POST',
    headers: connectHeader(start),
  });
}

/** Turns the pending bearer on; safe to repeat with the same bearer once it is active. */
export function activateBearer(options: AgentConnectionOptions, token: string): Promise<Agent> {
  return call(options, '/api/v1/agents/self/activate', {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
  });
}

export interface ConnectedAgent {
  credential: AgentCredential;
  agent: Agent;
}

/**
 * The whole flow: request, `onStart` (show the person `user_code` and `approval_url`), wait for the
 * decision, collect, open, activate. Rejects with a MarqueeProblem-like error when the request is
 * denied, cancelled or expires.
 */
export async function connectAgent(
  options: AgentConnectionOptions,
  request: Omit<AgentConnectionRequest, 'recipient_public_key'>,
  hooks: {
    onStart?: (start: AgentConnectionStart) => void;
    onChange?: (c: AgentConnection) => void;
    signal?: AbortSignal;
  } = {},
): Promise<ConnectedAgent> {
  const key = await generateRecipientKey();
  const start = await requestConnection(options, request, key);
  hooks.onStart?.(start);
  const decided = await waitForDecision(options, start, hooks.onChange, hooks.signal);
  if (decided.state !== 'approved') throw new Error(`the connection was ${decided.state}`);
  const collection = await collectEnvelope(options, start);
  const credential = await openEnvelope(collection.envelope, collection.connection_id, key.privateKey);
  const agent = await activateBearer(options, credential.token);
  return { credential, agent };
}
