// Verification reads the stored bytes through the blob store; on a bucket every read is a request,
// so the number of reads must not grow with the media's length. Containers are read off the main
// thread, within a deadline.
import { Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ByteRange } from '../blobs/blob-store';
import { LocalBlobStore } from '../blobs/local-blob-store';
import { tempDirs } from '../testing/temp-dirs';
import { crc32 } from '../../sdk/pack/deterministic-archive';
import { ProblemError } from '../problem';
import { image, mp3, mp3DurationMs, sha256, video } from './media.fixtures';
import { IMAGE_PIXELS_MAX, verifyStoredMedia } from './media-verification';

const tempDir = tempDirs('verification');

/** A local store that counts its reads (as a bucket would count GET requests) and the bytes they yield. */
function countingStore(): { store: LocalBlobStore; reads: () => number; bytesRead: () => number } {
  const store = new LocalBlobStore(tempDir());
  let reads = 0;
  let bytesRead = 0;
  const read = store.read.bind(store);
  store.read = (key: string, range?: ByteRange): Readable => {
    reads++;
    const source = read(key, range);
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytesRead += chunk.length;
        done(null, chunk);
      },
    });
    source.on('error', (error) => counted.destroy(error));
    counted.on('close', () => source.destroy());
    return source.pipe(counted);
  };
  return { store, reads: () => reads, bytesRead: () => bytesRead };
}

describe('media verification reads', () => {
  it('verifies an MP3 without a Xing header in a few reads, not one per frame', async () => {
    const frames = 20_000; // about 8 minutes, 8.3 MB: a frame-by-frame scan would read 20,000 times
    const bytes = mp3(frames);
    const { store, reads } = countingStore();
    await store.write('media/song', bytes);
    const verified = await verifyStoredMedia(
      store,
      'media/song',
      { bytes: bytes.length, sha256: sha256(bytes), contentType: 'audio/mpeg' },
      new AbortController().signal,
    );
    expect(verified.durationMs).toBe(mp3DurationMs(frames));
    expect(reads()).toBeLessThan(50);
  });
});

describe('image headers', () => {
  it('are read from the file: the image never passes through memory whole', async () => {
    // A PNG of 8 MiB: a small picture and what follows its end (any image may be up to 1 GiB).
    const bytes = Buffer.concat([await image('png', 64, 48), Buffer.alloc(8 * 1024 * 1024, 1)]);
    const { store, bytesRead } = countingStore();
    await store.write('media/poster', bytes);
    const verified = await verifyStoredMedia(
      store,
      'media/poster',
      { bytes: bytes.length, sha256: sha256(bytes), contentType: 'image/png' },
      new AbortController().signal,
    );
    expect(verified).toEqual({ width: 64, height: 48, durationMs: null, codecs: null });
    // Once for the SHA-256, and the first bytes for the type: the header is no reason to read it all.
    expect(bytesRead()).toBeLessThan(bytes.length + 1024 * 1024);
  });
});

/** A PNG whose header says `width` × `height`, with a few bytes of pixel data. */
function pngOfSize(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const framed = Buffer.alloc(body.length + 8);
    framed.writeUInt32BE(data.length, 0);
    body.copy(framed, 4);
    framed.writeUInt32BE(crc32(body), body.length + 4);
    return framed;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2], 8); // 8-bit RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(1024))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('image pixel sizes', () => {
  async function verifyPng(width: number, height: number) {
    const bytes = pngOfSize(width, height);
    const store = new LocalBlobStore(tempDir());
    await store.write('media/huge', bytes);
    return verifyStoredMedia(
      store,
      'media/huge',
      { bytes: bytes.length, sha256: sha256(bytes), contentType: 'image/png' },
      new AbortController().signal,
    ).catch((error: unknown) => error);
  }

  it('refuses an image over 16383² pixels saying how large it is, and takes one at the limit', async () => {
    const refused = await verifyPng(100_000, 100_000);
    expect(refused).toBeInstanceOf(ProblemError);
    expect((refused as ProblemError).options.errors?.[0]).toMatchObject({ field: 'content_type', code: 'too_large' });
    expect((refused as ProblemError).detail).toMatch(/100000 × 100000 pixels; at most 268402689/);
    expect(await verifyPng(IMAGE_PIXELS_MAX + 1, 1)).toBeInstanceOf(ProblemError);
    expect(await verifyPng(16383, 16383)).toMatchObject({ width: 16383, height: 16383 });
  });
});

/** The MP4 with its sample-to-chunk table's first entry claiming `samplesPerChunk` samples per chunk. */
function withSamplesPerChunk(mp4: Buffer, samplesPerChunk: number): Buffer {
  const bytes = Buffer.from(mp4);
  // stsc: type, version and flags, entry count, then (first chunk, samples per chunk, description index).
  bytes.writeUInt32BE(samplesPerChunk, bytes.indexOf('stsc') + 4 + 4 + 4 + 4);
  return bytes;
}

describe('containers whose tables a parser trusts', () => {
  it('reads them on a worker, within the deadline: the server keeps answering meanwhile', async () => {
    // About 1.5 billion loop turns for each sample read: seconds of a core, minutes for 2^32.
    const bytes = withSamplesPerChunk(await video('mp4'), 1_500_000_000);
    const store = new LocalBlobStore(tempDir());
    await store.write('media/clip', bytes);
    let longestPause = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      longestPause = Math.max(longestPause, performance.now() - last);
      last = performance.now();
    }, 10);
    const started = performance.now();
    try {
      const refused = await verifyStoredMedia(
        store,
        'media/clip',
        { bytes: bytes.length, sha256: sha256(bytes), contentType: 'video/mp4' },
        new AbortController().signal,
        500,
      ).catch((error: unknown) => error);
      longestPause = Math.max(longestPause, performance.now() - last);
      expect(refused).toBeInstanceOf(ProblemError);
      expect((refused as ProblemError).options.errors?.[0]).toMatchObject({
        field: 'content_type',
        code: 'unreadable',
      });
      expect((refused as ProblemError).detail).toMatch(/could not be read within 0.5 s/);
    } finally {
      clearInterval(ticker);
    }
    expect(performance.now() - started).toBeLessThan(1500);
    expect(longestPause).toBeLessThan(250);
  });

  it('still reads an honest container, and a second one on the worker the first left', async () => {
    const bytes = await video('mp4');
    const store = new LocalBlobStore(tempDir());
    await store.write('media/clip', bytes);
    for (let i = 0; i < 2; i++) {
      const verified = await verifyStoredMedia(
        store,
        'media/clip',
        { bytes: bytes.length, sha256: sha256(bytes), contentType: 'video/mp4' },
        new AbortController().signal,
      );
      expect(verified).toEqual({ width: 320, height: 240, durationMs: 3000, codecs: 'avc1.42001f' });
    }
  });
});
