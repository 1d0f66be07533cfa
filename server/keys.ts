// Server keys derived per purpose from one secret, plus the random ids and bearer tokens built on them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Each purpose gets its own HKDF-derived key so a value signed for one can never verify as another. */
export type KeyPurpose =
  | 'idempotency-envelope'
  | 'event-cursor'
  | 'pairing-cookie'
  | 'device-cookie'
  | 'runtime-cookie'
  | 'native-session'
  | 'placement-capability'
  | 'release-grant'
  | 'upload-url'
  | 'release-label'
  | 'browser-link-cookie'
  | 'browser-link-delivery'
  | 'lockstep-lan';

export class Keys {
  private readonly derived = new Map<KeyPurpose, Buffer>();
  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new Error('server secret must be at least 32 bytes');
  }

  key(purpose: KeyPurpose): Buffer {
    let k = this.derived.get(purpose);
    if (!k) {
      k = Buffer.from(crypto.hkdfSync('sha256', this.secret, Buffer.alloc(0), `marquee/${purpose}`, 32));
      this.derived.set(purpose, k);
    }
    return k;
  }

  /** HMAC-SHA-256 of the text, base64url. */
  sign(purpose: KeyPurpose, text: string): string {
    return crypto.createHmac('sha256', this.key(purpose)).update(text).digest('base64url');
  }

  verify(purpose: KeyPurpose, text: string, signature: string): boolean {
    return safeEqual(this.sign(purpose, text), signature);
  }

  /** `payload.signature`, payload being base64url JSON. */
  seal(purpose: KeyPurpose, value: unknown): string {
    const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${payload}.${this.sign(purpose, payload)}`;
  }

  unseal<T>(purpose: KeyPurpose, token: string | undefined): T | undefined {
    if (!token) return undefined;
    const dot = token.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const payload = token.slice(0, dot);
    if (!this.verify(purpose, payload, token.slice(dot + 1))) return undefined;
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as T;
    } catch {
      return undefined;
    }
  }

  /** AES-256-GCM, for values that must be readable again (idempotent credential redelivery). */
  encrypt(purpose: KeyPurpose, plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key(purpose), iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  decrypt(purpose: KeyPurpose, sealed: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key(purpose), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** Reads the secret from config, else from `<dataDir>/secret.key`, creating it (mode 0600) on first run. */
export function loadSecret(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return crypto.createHash('sha256').update(configured).digest();
  const file = path.join(dataDir, 'secret.key');
  try {
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = crypto.randomBytes(32);
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, secret.toString('base64url'), { mode: 0o600, flag: 'wx' });
  return secret;
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export function randomToken(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

/** An opaque, prefixed, URL-safe id such as `scr_3q9…` (128 random bits). */
export function newId(prefix: string): string {
  return `${prefix}_${randomToken(16)}`;
}

export function sha256Hex(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}
