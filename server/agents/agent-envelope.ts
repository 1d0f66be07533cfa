// The sealed delivery of a connected agent's credential: X25519 between a fresh server key and the
// agent's recipient key, HKDF-SHA-256 to an AES-256-GCM key, the connection id as additional data.
// Only the holder of the recipient's private key can open it; the server keeps no key that could.
import crypto from 'node:crypto';
import { AGENT_ENVELOPE_ALG, AGENT_ENVELOPE_INFO, type AgentCredentialEnvelope } from '../../sdk/contract/agents';
import { invalidField } from '../problem';

const SALT_BYTES = 32;
const NONCE_BYTES = 12;
const KEY_BYTES = 32;

function recipientKey(x: string): crypto.KeyObject {
  return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x }, format: 'jwk' });
}

/**
 * The shared secret with `x`; undefined for a key no agreement can use (not a point of the curve
 * as encoded, or a low-order point, whose shared secret is all zeros whoever the peer is).
 */
function agree(privateKey: crypto.KeyObject, x: string): Buffer | undefined {
  try {
    const shared = crypto.diffieHellman({ privateKey, publicKey: recipientKey(x) });
    return shared.every((b) => b === 0) ? undefined : shared;
  } catch {
    return undefined;
  }
}

/** Refuses a recipient key that cannot seal anything (checked when the connection starts). */
export function checkRecipientKey(x: string): void {
  const probe = crypto.generateKeyPairSync('x25519');
  if (!agree(probe.privateKey, x))
    throw invalidField('recipient_public_key', 'is not a usable X25519 public key (a low-order or malformed point)');
}

export function sealCredential(recipientX: string, connectionId: string, plaintext: string): AgentCredentialEnvelope {
  const ephemeral = crypto.generateKeyPairSync('x25519');
  const shared = agree(ephemeral.privateKey, recipientX);
  if (!shared) throw new Error('recipient key refused at sealing although it passed at connection start');
  const salt = crypto.randomBytes(SALT_BYTES);
  const key = Buffer.from(crypto.hkdfSync('sha256', shared, salt, AGENT_ENVELOPE_INFO, KEY_BYTES));
  const nonce = crypto.randomBytes(NONCE_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(connectionId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const epk = ephemeral.publicKey.export({ format: 'jwk' });
  return {
    alg: AGENT_ENVELOPE_ALG,
    epk: { kty: 'OKP', crv: 'X25519', x: epk.x! },
    salt: salt.toString('base64url'),
    nonce: nonce.toString('base64url'),
    ciphertext: ciphertext.toString('base64url'),
  };
}
