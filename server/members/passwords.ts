// Password hashes: scrypt from Node's own crypto, memory-hard (64 MiB per hash at the default cost),
// with a random salt per hash. A stored hash names its cost, so raising the default later still
// verifies older hashes. Hashing runs on libuv's thread pool, never on the event loop, and at most
// HASHES_AT_ONCE at a time so a burst of sign-ins cannot take the memory of many hashes at once.
import crypto from 'node:crypto';
import { z } from 'zod';

export interface PasswordHashCost {
  /** CPU/memory cost, a power of two. */
  N: number;
  /** Block size. */
  r: number;
  /** Parallelization. */
  p: number;
}

/**
 * OWASP's scrypt equivalents (Password Storage Cheat Sheet) trade memory for passes at equal work:
 * N=2^17,r=8,p=1 is 128 MiB; N=2^16,r=8,p=2 the same work in 64 MiB, kinder to small servers.
 */
export const PASSWORD_HASH_COST: PasswordHashCost = { N: 2 ** 16, r: 8, p: 2 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Hashes computed at once; the rest wait their turn (each holds 128·N·r bytes while it runs). */
const HASHES_AT_ONCE = 2;

/** NIST SP 800-63B: at least 8; we ask 12. Long passphrases are welcome; the cap bounds the work. */
export const PASSWORD_MIN_CHARS = 12;
export const PASSWORD_MAX_CHARS = 256;

export const Password = z
  .string()
  .min(PASSWORD_MIN_CHARS, `must be at least ${PASSWORD_MIN_CHARS} characters`)
  .max(PASSWORD_MAX_CHARS, `must be at most ${PASSWORD_MAX_CHARS} characters`);

let running = 0;
const waiting: (() => void)[] = [];

async function withSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= HASHES_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function scrypt(password: string, salt: Buffer, cost: PasswordHashCost): Promise<Buffer> {
  // Unicode normalization (NIST): the same passphrase typed on two keyboards is the same password.
  const input = password.normalize('NFKC');
  return withSlot(
    () =>
      new Promise((resolve, reject) =>
        crypto.scrypt(input, salt, KEY_BYTES, { ...cost, maxmem: 256 * cost.N * cost.r + 1024 * 1024 }, (err, key) =>
          err ? reject(err) : resolve(key),
        ),
      ),
  );
}

/** `scrypt$N$r$p$salt$key`, salt and key base64url. */
export async function hashPassword(password: string, cost: PasswordHashCost = PASSWORD_HASH_COST): Promise<string> {
  const salt = crypto.randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export function hashCost(stored: string): PasswordHashCost | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0)) return undefined;
  return { N, r, p };
}

/** Whether the password matches the stored hash (constant time in the key comparison). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const cost = hashCost(stored);
  if (!cost) return false;
  const parts = stored.split('$');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const key = await scrypt(password, Buffer.from(parts[4]!, 'base64url'), cost);
  return key.length === expected.length && crypto.timingSafeEqual(key, expected);
}

const decoys = new Map<string, Promise<string>>();

/**
 * Spends what verifying a real hash of this cost spends, for an address with no password: a
 * sign-in for an unknown address takes as long as one for a known address with a wrong password.
 */
export async function verifyDecoy(password: string, cost: PasswordHashCost): Promise<false> {
  const key = `${cost.N}:${cost.r}:${cost.p}`;
  let decoy = decoys.get(key);
  if (!decoy) {
    decoy = hashPassword(crypto.randomBytes(16).toString('base64url'), cost);
    decoys.set(key, decoy);
  }
  await verifyPassword(password, await decoy);
  return false;
}
