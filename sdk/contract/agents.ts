// Agent installations (Model P): connecting an agent to a project through a member's approval, the
// sealed credential it collects, activation, its own status and disconnection.
import { z } from 'zod';
import { AGENT_NAME_MAX } from './limits';
import { AGENT_TYPE_PATTERN, CAPABILITY_AREAS, type CapabilityArea } from './tenants';

/** The Authorization scheme of the temporary connection credential (status stream, collection). */
export const AGENT_CONNECT_SCHEME = 'Marquee-Agent-Connect';

export const AGENT_CONNECTION_STATES = ['pending', 'approved', 'denied', 'cancelled', 'connected', 'expired'] as const;
export type AgentConnectionState = (typeof AGENT_CONNECTION_STATES)[number];
/** The status stream closes once the connection reaches one of these. */
export const AGENT_STREAM_FINAL_STATES: readonly AgentConnectionState[] = [
  'approved',
  'denied',
  'cancelled',
  'connected',
  'expired',
];

/** An X25519 public key as a JWK (RFC 8037). A private key (`d`) is refused, never stored. */
export const X25519PublicJwk = z.strictObject({
  kty: z.literal('OKP'),
  crv: z.literal('X25519'),
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the 32-byte public key, base64url'),
  kid: z.string().max(200).optional(),
  use: z.literal('enc').optional(),
  alg: z.string().max(40).optional(),
  ext: z.boolean().optional(),
  key_ops: z.array(z.string().max(40)).max(8).optional(),
});
export type X25519PublicJwk = z.infer<typeof X25519PublicJwk>;

/** spec: omitted means all six; an unknown, duplicate or empty list is invalid_request. */
export const CapabilityList = z
  .array(z.enum(CAPABILITY_AREAS))
  .min(1)
  .refine((list) => new Set(list).size === list.length, 'must not repeat an area');

/** spec AgentConnectionRequest. */
export const AgentConnectionRequest = z.strictObject({
  name: z.string().min(1).max(AGENT_NAME_MAX).optional(),
  agent_type: z.string().regex(AGENT_TYPE_PATTERN).optional(),
  platform: z.string().max(80).optional(),
  version: z.string().max(40).optional(),
  capabilities: CapabilityList.optional(),
  recipient_public_key: z.unknown().transform((value, ctx) => {
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, 'd')) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be the public key only: the private key (d) never leaves the agent',
      });
      return z.NEVER;
    }
    const parsed = X25519PublicJwk.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  }),
});
export type AgentConnectionRequest = Omit<z.input<typeof AgentConnectionRequest>, 'recipient_public_key'> & {
  recipient_public_key: X25519PublicJwk;
};

/** What the status stream and the dashboard show of a connection: never a bearer, envelope or project. */
export interface AgentConnection {
  id: string;
  state: AgentConnectionState;
  name: string;
  agent_type: string;
  platform: string | null;
  version: string | null;
  capabilities: CapabilityArea[];
  created_at: string;
  /** Approval deadline: 24 hours after the request. */
  expires_at: string;
  /** Once approved: collect and activate before this (24 hours after approval). */
  delivery_expires_at: string | null;
}

export interface AgentConnectionStart {
  connection: AgentConnection;
  /** The temporary credential: `Authorization: Marquee-Agent-Connect <connect_token>`. Never in a URL. */
  connect_token: string;
  /** Show it to the person; they type it on the approval page, which binds their approval to you. */
  user_code: string;
  /** Where a member approves, on the dashboard origin. Carries no credential. */
  approval_url: string;
  /** GET with the connect credential: text/event-stream of AgentConnection frames. */
  events_url: string;
  /** POST with the connect credential once approved: the sealed credential. */
  credential_url: string;
}

/**
 * The credential sealed to the recipient key: X25519 (an ephemeral server key and the recipient's),
 * HKDF-SHA-256 (salt, info `AGENT_ENVELOPE_INFO`) to a 256-bit key, AES-256-GCM with the connection
 * id as additional data. All binary members are unpadded base64url; `ciphertext` ends with the
 * 16-byte GCM tag (WebCrypto's layout).
 */
export interface AgentCredentialEnvelope {
  alg: typeof AGENT_ENVELOPE_ALG;
  epk: { kty: 'OKP'; crv: 'X25519'; x: string };
  salt: string;
  nonce: string;
  ciphertext: string;
}

export const AGENT_ENVELOPE_ALG = 'X25519+HKDF-SHA-256+A256GCM';
export const AGENT_ENVELOPE_INFO = 'marquee/agent-credential/v1';

export interface AgentCredentialCollection {
  connection_id: string;
  envelope: AgentCredentialEnvelope;
  /** Activate before this, or the credential lapses. */
  delivery_expires_at: string;
}

/** The envelope's plaintext (JSON). */
export interface AgentCredential {
  /** The project bearer, pending until activated with POST /api/v1/agents/self/activate. */
  token: string;
  agent_id: string;
  project_id: string;
  capabilities: CapabilityArea[];
  /** The control-plane origin the bearer is for. */
  control_origin: string;
}

export interface Agent {
  id: string;
  name: string;
  agent_type: string;
  platform: string | null;
  version: string | null;
  state: 'pending' | 'active' | 'revoked';
  capabilities: CapabilityArea[];
  created_at: string;
  activated_at: string | null;
  revoked_at: string | null;
}

export interface AgentSelfStatus {
  agent: Agent;
  /** True when at least one member of the project can sign in (has a passkey or a password). */
  connection_ready: boolean;
}

/** spec AgentDisconnectRequest. */
export const AgentDisconnectRequest = z.strictObject({ allow_last_agent: z.boolean().default(false) });

/** Dashboard: the approving member types the code the agent shows. */
export const AgentConnectionApprove = z.strictObject({
  user_code: z.string().min(1).max(20),
});

/** The user code's alphabet (no 0/O, 1/I/L): eight characters shown as `ABCD-EFGH`. */
export const USER_CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';

/** A typed code as the server compares it: upper case, dashes and spaces dropped. */
export function normalizeUserCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}
