// Bytes from the server written to a local file whole or not at all: through a temporary file
// beside it, hashed on the way, checked against the SHA-256 the server named, then renamed.
import { createHash } from 'node:crypto';
import crypto from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { CliFailure, EXIT } from './exit-codes';

/** Writes a stream to `file` through a temporary file, checking its SHA-256; nothing is left on failure. */
export async function writeVerified(
  body: ReadableStream<Uint8Array>,
  file: string,
  expectedSha256: string | undefined,
  signal: AbortSignal,
): Promise<{ bytes: number; sha256: string }> {
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${crypto.randomBytes(4).toString('hex')}.tmp`,
  );
  const hash = createHash('sha256');
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(
      Readable.fromWeb(body as NodeReadableStream<Uint8Array>),
      count,
      createWriteStream(temporary, { mode: 0o644 }),
      {
        signal,
      },
    );
    const sha256 = hash.digest('hex');
    if (expectedSha256 !== undefined && sha256 !== expectedSha256)
      throw new CliFailure(
        EXIT.unexpected,
        'integrity_mismatch',
        `the bytes received hash to ${sha256}, not ${expectedSha256}`,
      );
    await fs.rename(temporary, file);
    return { bytes, sha256 };
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}
