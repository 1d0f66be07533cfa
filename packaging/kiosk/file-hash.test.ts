import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileHasher, type HashStream } from './file-hash';

/** Hands the stream a copy of `bytes` in memory of its own, as the mirror hands over its chunks. */
function giveCopy(stream: HashStream, bytes: Buffer, returned: (chunk: Buffer) => void = () => {}): void {
  const chunk = Buffer.alloc(bytes.length);
  bytes.copy(chunk);
  stream.give(chunk, chunk.length, returned);
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the file hasher', () => {
  it('hashes files on at most its number of workers, each job on the least busy, and ends them on close', async () => {
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
    giveCopy(stream, whole.subarray(1_000_001 + 1024 * 1024));
    expect(await stream.digest()).toBe(crypto.createHash('sha256').update(whole).digest('hex'));
    expect(returned).toHaveLength(1);
    expect(returned[0]!.length).toBe(1024 * 1024);
    expect(returned[0]!.equals(whole.subarray(1_000_001, 1_000_001 + 1024 * 1024))).toBe(true);

    // A prefix that is not there is the digest's error; a dropped stream asks for nothing more.
    const missing = hasher.stream(path.join(dir, 'gone'), 10);
    await expect(missing.digest()).rejects.toMatchObject({ code: 'ENOENT' });
    const dropped = hasher.stream(file, 0);
    giveCopy(dropped, whole.subarray(0, 10));
    dropped.drop();
    const fresh = hasher.stream(file, 0);
    giveCopy(fresh, whole.subarray(0, 10));
    expect(await fresh.digest()).toBe(crypto.createHash('sha256').update(whole.subarray(0, 10)).digest('hex'));
    expect(() => hasher.stream(file, 0).give(whole.subarray(5, 10), 5, () => undefined)).toThrow(/whole ArrayBuffer/);
    await hasher.close();
  });

  it('lets an idle worker go once its stream is dropped: the next stream takes it instead of a new one', async () => {
    const hasher = new FileHasher(2);
    const dropped = hasher.stream('/nonexistent', 0);
    expect(hasher.workers).toBe(1);
    dropped.drop();
    const next = hasher.stream('/nonexistent', 0);
    expect(hasher.workers).toBe(1); // a dropped stream that kept its worker busy would start a second
    next.drop();
    await hasher.close();
  });

  it('gives back every chunk a crashed worker held, fails the digest, and hands later chunks straight back', async () => {
    const hasher = new FileHasher(1);
    const stream = hasher.stream('/nonexistent', 0);
    const returned: number[] = [];
    // Handed over, then the worker dies before answering (as from an out-of-memory abort).
    giveCopy(stream, Buffer.alloc(4096, 1), (chunk) => returned.push(chunk.length));
    const worker = (hasher as unknown as { live: { worker: { emit(event: string, error: Error): void } }[] }).live[0]!;
    worker.worker.emit('error', new Error('the worker died'));
    expect(returned).toEqual([4096]);
    giveCopy(stream, Buffer.alloc(100, 2), (chunk) => returned.push(chunk.length));
    expect(returned).toEqual([4096, 100]);
    await expect(stream.digest()).rejects.toThrow('the worker died');
    await hasher.close();
  });
});
