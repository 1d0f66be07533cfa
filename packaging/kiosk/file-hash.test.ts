import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileHasher } from './file-hash';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the file hasher', () => {
  it('hashes files on at most its number of workers, queueing the rest, and ends them on close', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-hash-'));
    dirs.push(dir);
    const files = [0, 1, 2, 3, 4].map((i) => {
      const bytes = crypto.randomBytes(1024 * 1024 * (i % 2) + 777 * i); // 0 bytes to past one block
      const file = path.join(dir, `f${i}`);
      fs.writeFileSync(file, bytes);
      return { file, digest: crypto.createHash('sha256').update(bytes).digest('hex') };
    });
    const hasher = new FileHasher(2);
    const digests = await Promise.all(files.map((f) => hasher.sha256(f.file)));
    expect(digests).toEqual(files.map((f) => f.digest));
    expect(hasher.workers).toBe(2);
    // A file that is not there is an error of its own; the worker goes on with the next one.
    await expect(hasher.sha256(path.join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await hasher.sha256(files[1]!.file)).toBe(files[1]!.digest);
    await hasher.close();
    expect(hasher.workers).toBe(0);
  });
});
