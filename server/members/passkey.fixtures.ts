// Tests' passkey authenticator in Node: makes a discoverable P-256 credential and answers WebAuthn
// ceremonies as a platform authenticator with user verification would (attestation "none"), so the
// server's WebAuthn rules are tested without a browser. e2e runs Chromium's virtual authenticator.
import crypto from 'node:crypto';

/** The CBOR this needs (RFC 8949): unsigned and negative integers, byte and text strings, maps. */
function cbor(value: unknown): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Map) {
    const parts = [head(5, value.size)];
    for (const [k, v] of value) parts.push(cbor(k), cbor(v));
    return Buffer.concat(parts);
  }
  throw new Error(`cbor: unsupported ${typeof value}`);
}

const b64u = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export interface SoftCredential {
  id: Buffer;
  rpId: string;
  userHandle: string;
  privateKey: crypto.KeyObject;
  publicKey: crypto.KeyObject;
  counter: number;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /** navigator.credentials.create: a RegistrationResponseJSON for these creation options. */
  register(options: any, origin: string): Record<string, unknown> {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const id = crypto.randomBytes(32);
    const credential: SoftCredential = {
      id,
      rpId: options.rp.id,
      userHandle: options.user.id,
      privateKey,
      publicKey,
      counter: 0,
    };
    const cose = cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      this.rpIdHash(credential.rpId),
      Buffer.from([0x01 | 0x04 | 0x40]), // user present, user verified, attested credential data
      Buffer.alloc(4),
      Buffer.alloc(16), // AAGUID
      idLength,
      id,
      cose,
    ]);
    const clientData = JSON.stringify({
      type: 'webauthn.create',
      challenge: options.challenge,
      origin,
      crossOrigin: false,
    });
    const attestation = cbor(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    this.credentials.push(credential);
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: 'public-key',
      response: { clientDataJSON: b64u(clientData), attestationObject: b64u(attestation), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /**
   * navigator.credentials.get: an AuthenticationResponseJSON from this authenticator's credential
   * for the options' relying party (the last one made, unless told), its counter moved on by one.
   */
  assert(
    options: any,
    origin: string,
    overrides: { credential?: SoftCredential; counter?: number; userVerified?: boolean } = {},
  ): Record<string, unknown> {
    const credential = overrides.credential ?? this.credentials.filter((c) => c.rpId === options.rpId).at(-1);
    if (!credential) throw new Error(`no credential for ${options.rpId}`);
    credential.counter = overrides.counter ?? credential.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(credential.counter);
    const flags = 0x01 | (overrides.userVerified === false ? 0 : 0x04);
    const authData = Buffer.concat([this.rpIdHash(credential.rpId), Buffer.from([flags]), counter]);
    const clientData = JSON.stringify({
      type: 'webauthn.get',
      challenge: options.challenge,
      origin,
      crossOrigin: false,
    });
    const signed = Buffer.concat([authData, crypto.createHash('sha256').update(clientData).digest()]);
    const signature = crypto.sign('sha256', signed, credential.privateKey);
    return {
      id: b64u(credential.id),
      rawId: b64u(credential.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientData),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
    };
  }

  private rpIdHash(rpId: string): Buffer {
    return crypto.createHash('sha256').update(rpId).digest();
  }
}
