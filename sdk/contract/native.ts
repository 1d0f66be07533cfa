// The native players' flow on the runtime plane (reference contract `/runtime/v1/native/*`):
// pairing from an Ed25519 public key plus host facts, a temporary `Marquee-Pairing` credential,
// completion and identity proofs as EdDSA compact JWS, and the `Marquee-Session` runtime
// credential minted from a possession proof. Native clients never send or receive cookies.
import { z } from 'zod';
import { CONTROL_CHARACTER } from './limits';
import type { RuntimeSession } from './screens';

/** Authorization schemes of the native realm (never sent together with cookies). */
export const NATIVE_PAIRING_SCHEME = 'Marquee-Pairing';
export const NATIVE_SESSION_SCHEME = 'Marquee-Session';
/** `mqp_` + 43 base64url characters: the temporary pairing credential. */
export const NATIVE_PAIRING_CREDENTIAL = /^mqp_[A-Za-z0-9_-]{43}$/;
/** `mqs_` + an opaque signed base64url value: the 24-hour runtime credential. */
export const NATIVE_SESSION_CREDENTIAL = /^mqs_[A-Za-z0-9_-]{44,1024}$/;

/** The audience every proof names. */
export const NATIVE_AUDIENCE = 'marquee-runtime';
export const NATIVE_PROOF_OPS = ['pairing.complete', 'session.mint', 'identity.reset'] as const;
export type NativeProofOp = (typeof NATIVE_PROOF_OPS)[number];

const B64URL_43 = /^[A-Za-z0-9_-]{43}$/;

/** An Ed25519 public key as a JWK (RFC 8037); `kid`, when sent, must be its RFC 7638 thumbprint. */
export const PlayerPublicKey = z.strictObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().regex(B64URL_43, 'must be the base64url 32-byte Ed25519 public key'),
  kid: z.string().regex(B64URL_43, 'must be the RFC 7638 SHA-256 thumbprint').optional(),
});
export type PlayerPublicKey = z.infer<typeof PlayerPublicKey>;

const HostText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !CONTROL_CHARACTER.test(s), 'must not contain control characters');

/**
 * What the device says about itself. platform, model, firmware and manufacturer are shown to the
 * owner (a recovery offer names them); duid and serial only match a device to its screen and are
 * never shown, logged or echoed.
 */
export const HostFacts = z.strictObject({
  platform: HostText(80),
  model: HostText(120).optional(),
  firmware: HostText(120).optional(),
  manufacturer: HostText(120).optional(),
  duid: HostText(200).optional(),
  serial: HostText(200).optional(),
});
export type HostFacts = z.infer<typeof HostFacts>;

/** The facts of a device an owner may see (no identifiers). */
export type HostDescription = Pick<HostFacts, 'platform' | 'model' | 'firmware' | 'manufacturer'>;

export function describeHost(host: HostFacts): HostDescription {
  return {
    platform: host.platform,
    ...(host.model !== undefined ? { model: host.model } : {}),
    ...(host.firmware !== undefined ? { firmware: host.firmware } : {}),
    ...(host.manufacturer !== undefined ? { manufacturer: host.manufacturer } : {}),
  };
}

export const NativePairingStart = z.strictObject({ public_key: PlayerPublicKey, host: HostFacts.optional() });
export type NativePairingStart = z.infer<typeof NativePairingStart>;

export interface NativePairingSession {
  code: string;
  /** `mqp_…`: send as `Authorization: Marquee-Pairing <credential>` to the pairing events and completion. */
  pairing_credential: string;
  /** The unclaimed code's deadline (72 h); a claim opens a fresh 72-hour collection window. */
  expires_at: string;
}

const Signature = z.string().min(80).max(4096);

export const NativePairingComplete = z.strictObject({
  completion_nonce: z.string().regex(B64URL_43),
  public_key: PlayerPublicKey,
  /** Compact EdDSA JWS with op=pairing.complete and nonce=completion_nonce. */
  signature: Signature,
});
export type NativePairingComplete = z.infer<typeof NativePairingComplete>;

export const NativeIdentityChallengeRequest = z.strictObject({
  kid: z.string().regex(B64URL_43),
  /** What the proof will be for (default session.mint); the challenge is bound to it. */
  op: z.enum(['session.mint', 'identity.reset']).optional(),
});
export type NativeIdentityChallengeRequest = z.infer<typeof NativeIdentityChallengeRequest>;

export interface NativeIdentityChallenge {
  nonce: string;
  expires_at: string;
  aud: typeof NATIVE_AUDIENCE;
  op: NativeProofOp;
}

export const NativeIdentityProof = z.strictObject({
  kid: z.string().regex(B64URL_43),
  public_key: PlayerPublicKey,
  signature: Signature,
});
export type NativeIdentityProof = z.infer<typeof NativeIdentityProof>;

export interface NativeRuntimeSession extends RuntimeSession {
  paired: true;
  /** `mqs_…`: send as `Authorization: Marquee-Session <credential>`; valid 24 hours. */
  runtime_credential: string;
}

/** The JWS protected header of every proof. */
export interface NativeProofHeader {
  alg: 'EdDSA';
  typ: 'JWT';
  kid: string;
}

/** The claims every proof signs: audience, operation, the server's nonce, and when it was made. */
export interface NativeProofClaims {
  aud: typeof NATIVE_AUDIENCE;
  op: NativeProofOp;
  nonce: string;
  /** Seconds since the epoch. */
  iat: number;
}
