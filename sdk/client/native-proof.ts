// A native player's side of its identity: the public JWK and RFC 7638 thumbprint of its Ed25519
// key, and possession proofs (EdDSA compact JWS over {aud, op, nonce, iat}) for the native routes.
import type { CompactSign, exportJWK } from 'jose';
import {
  NATIVE_AUDIENCE,
  type NativeProofClaims,
  type NativeProofHeader,
  type NativeProofOp,
  type PlayerPublicKey,
} from '../contract/native';

/** jose, loaded on first use (a kiosk starts playing from disk before it proves anything). */
const jose = () => import('jose');

/** A private key jose can sign with: a Node KeyObject or a WebCrypto CryptoKey. */
export type SigningKey = Parameters<CompactSign['sign']>[0];

/** The public half as the native routes take it (no `kid`: the server computes it). */
export async function playerPublicKeyOf(publicKey: Parameters<typeof exportJWK>[0]): Promise<PlayerPublicKey> {
  const { exportJWK } = await jose();
  const jwk = await exportJWK(publicKey);
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string')
    throw new Error('a native player key must be Ed25519');
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
}

export async function keyIdOf(publicKey: PlayerPublicKey): Promise<string> {
  const { calculateJwkThumbprint } = await jose();
  return calculateJwkThumbprint({ kty: publicKey.kty, crv: publicKey.crv, x: publicKey.x }, 'sha256');
}

/** Signs one proof for `op` over the server's `nonce` (a challenge, or the completion nonce). */
export async function signNativeProof(
  privateKey: SigningKey,
  input: { kid: string; op: NativeProofOp; nonce: string; nowMs?: number },
): Promise<string> {
  const claims: NativeProofClaims = {
    aud: NATIVE_AUDIENCE,
    op: input.op,
    nonce: input.nonce,
    iat: Math.floor((input.nowMs ?? Date.now()) / 1000),
  };
  const header: NativeProofHeader = { alg: 'EdDSA', typ: 'JWT', kid: input.kid };
  const { CompactSign } = await jose();
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ ...header })
    .sign(privateKey);
}
