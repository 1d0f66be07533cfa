// Possession proofs of native players: an EdDSA compact JWS over {aud, op, nonce, iat}, signed by
// the device's Ed25519 key. Verification is jose's (algorithm pinned to EdDSA, so `none` or an
// HMAC header cannot pass); the claims are then held to what this request expects.
import { calculateJwkThumbprint, compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { z } from 'zod';
import { NATIVE_AUDIENCE, type NativeProofOp, type PlayerPublicKey } from '../../sdk/contract/native';
import { problem } from '../problem';

/** A proof's `iat` may be this far from the server's clock (device clocks drift; nonces do the rest). */
export const PROOF_CLOCK_SKEW_MS = 5 * 60_000;

const Claims = z.object({
  aud: z.literal(NATIVE_AUDIENCE),
  op: z.string(),
  nonce: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  iat: z.number().int().nonnegative(),
});

/** The RFC 7638 SHA-256 thumbprint of the key: the identity's name (`kid`). */
export function thumbprintOf(key: PlayerPublicKey): Promise<string> {
  return calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x }, 'sha256');
}

/** The key's thumbprint; identity_invalid when a `kid` sent beside it names another key. */
export async function kidOf(key: PlayerPublicKey, claimed?: string): Promise<string> {
  const kid = await thumbprintOf(key);
  for (const other of [key.kid, claimed]) {
    if (other !== undefined && other !== kid)
      throw problem('identity_invalid', 'kid is not the RFC 7638 thumbprint of public_key');
  }
  return kid;
}

function invalid(detail: string) {
  return problem('proof_invalid', detail);
}

/**
 * Verifies `signature` with `key` and returns its nonce once the claims match: the audience, the
 * operation, and an `iat` within the skew. The caller checks the nonce against its own record
 * (a challenge, a completion nonce), which is what makes a proof single use.
 */
export async function verifyProof(
  signature: string,
  key: PlayerPublicKey,
  expected: { op: NativeProofOp; kid: string },
  now: number,
): Promise<{ nonce: string }> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(signature);
  } catch {
    throw invalid('signature is not a compact JWS');
  }
  if (header.alg !== 'EdDSA') throw invalid('the proof must be signed with EdDSA (Ed25519)');
  if (header.kid !== expected.kid) throw invalid('the proof header names another key');
  let payload: Uint8Array;
  try {
    const publicKey = await importJWK({ kty: key.kty, crv: key.crv, x: key.x }, 'EdDSA');
    ({ payload } = await compactVerify(signature, publicKey, { algorithms: ['EdDSA'] }));
  } catch {
    throw invalid('the proof signature does not verify with this key');
  }
  let claims: z.infer<typeof Claims>;
  try {
    claims = Claims.parse(JSON.parse(new TextDecoder().decode(payload)));
  } catch {
    throw invalid(`the proof claims must be {aud: "${NATIVE_AUDIENCE}", op, nonce, iat}`);
  }
  if (claims.op !== expected.op) throw invalid(`this route takes a proof with op=${expected.op}`);
  if (Math.abs(claims.iat * 1000 - now) > PROOF_CLOCK_SKEW_MS)
    throw invalid('the proof is too old or from the future; check the device clock and sign a new one');
  return { nonce: claims.nonce };
}
