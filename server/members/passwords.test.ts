// Password hashes: scrypt at the default (memory-hard) cost, salted, verified in constant time.
import { describe, expect, it } from 'vitest';
import { hashCost, hashPassword, PASSWORD_HASH_COST, verifyDecoy, verifyPassword } from './passwords';

const CHEAP = { N: 1024, r: 8, p: 1 };

describe('password hashes', () => {
  it('uses scrypt at 64 MiB per hash by default, and the stored hash names its cost', async () => {
    expect(128 * PASSWORD_HASH_COST.N * PASSWORD_HASH_COST.r).toBe(64 * 1024 * 1024);
    const stored = await hashPassword('a passphrase of some length');
    expect(stored).toMatch(/^scrypt\$65536\$8\$2\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(hashCost(stored)).toEqual(PASSWORD_HASH_COST);
    expect(await verifyPassword('a passphrase of some length', stored)).toBe(true);
  }, 60_000);

  it('verifies the right password only', async () => {
    const stored = await hashPassword('correct horse battery staple', CHEAP);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('salts every hash: the same password hashes differently twice', async () => {
    expect(await hashPassword('same password here', CHEAP)).not.toBe(await hashPassword('same password here', CHEAP));
  });

  it('verifies a hash made at another cost by the cost it names', async () => {
    const older = await hashPassword('made long ago', { N: 2048, r: 8, p: 1 });
    expect(await verifyPassword('made long ago', older)).toBe(true);
  });

  it('treats a passphrase typed in another Unicode normalization as the same (NFKC)', async () => {
    const stored = await hashPassword('caf\u00e9 au lait please', CHEAP);
    expect(await verifyPassword('cafe\u0301 au lait please', stored)).toBe(true);
  });

  it('refuses anything that is not a hash it made', async () => {
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$0$8$1$AAAA$AAAA')).toBe(false);
    expect(await verifyDecoy('x', CHEAP)).toBe(false);
  });
});
