// Verification reads the stored bytes through the blob store; on a bucket every read is a request,
// so the number of reads must not grow with the media's length.
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ByteRange } from '../blobs/blob-store';
import { LocalBlobStore } from '../blobs/local-blob-store';
import { tempDirs } from '../testing/temp-dirs';
import { mp3, mp3DurationMs, sha256 } from './media.fixtures';
import { verifyStoredMedia } from './media-verification';

const tempDir = tempDirs('verification');

/** A local store that counts its reads, as a bucket would count GET requests. */
function countingStore(): { store: LocalBlobStore; reads: () => number } {
  const store = new LocalBlobStore(tempDir());
  let reads = 0;
  const read = store.read.bind(store);
  store.read = (key: string, range?: ByteRange): Readable => {
    reads++;
    return read(key, range);
  };
  return { store, reads: () => reads };
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
