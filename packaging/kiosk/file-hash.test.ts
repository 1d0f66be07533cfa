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

  it('hashes a download as it is written, after the prefix on disk, handing chunks back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-hash-'));
    dirs.push(dir);
    const whole = crypto.randomBytes(3 * 1024 * 1024 + 99);
    const file = path.join(dir, 'part');
    // A resumed download: the first 1,000,001 bytes are on disk, and more than that is there
    // already by the time the worker reads (the download appends as it goes).
    fs.writeFileSync(file, whole.subarray(0, 1_500_000));
    const hasher = new FileHasher(1);
    const stream = hasher.stream(file, 1_000_001);
    const returned: Buffer[] = [];
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    whole.copy(chunk, 0, 1_000_001, 1_000_001 + chunk.length);
    stream.give(chunk, chunk.length, (back) => returned.push(back));
    expect(chunk.length).toBe(0); // its memory went to the worker
    stream.add(whole.subarray(1_000_001 + 1024 * 1024));
    expect(await stream.digest()).toBe(crypto.createHash('sha256').update(whole).digest('hex'));
    expect(returned).toHaveLength(1);
    expect(returned[0]!.length).toBe(1024 * 1024);
    expect(returned[0]!.equals(whole.subarray(1_000_001, 1_000_001 + 1024 * 1024))).toBe(true);

    // A prefix that is not there is the digest's error; a dropped stream asks for nothing more.
    const missing = hasher.stream(path.join(dir, 'gone'), 10);
    await expect(missing.digest()).rejects.toMatchObject({ code: 'ENOENT' });
    const dropped = hasher.stream(file, 0);
    dropped.add(whole.subarray(0, 10));
    dropped.drop();
    const fresh = hasher.stream(file, 0);
    fresh.add(whole.subarray(0, 10));
    expect(await fresh.digest()).toBe(crypto.createHash('sha256').update(whole.subarray(0, 10)).digest('hex'));
    expect(() => hasher.stream(file, 0).give(whole.subarray(5, 10), 5, () => undefined)).toThrow(/whole ArrayBuffer/);
    await hasher.close();
  });
});
