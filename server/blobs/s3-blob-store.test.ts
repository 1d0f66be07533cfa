// A bucket that cannot be reached is a dependency that is down: the store says so with the spec's
// dependency_unavailable (the SDK's own error kept as its cause, for the log), never the raw error.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ProblemError } from '../problem';
import { S3RVER_CREDENTIALS } from '../testing/s3-server';
import { S3BlobStore } from './s3-blob-store';
import { parseS3BlobUrl } from './s3-location';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function unreachableStore(): Promise<S3BlobStore> {
  const endpoint = encodeURIComponent(`http://127.0.0.1:${await closedPort()}`);
  return new S3BlobStore(parseS3BlobUrl(`s3://marquee/blobs?endpoint=${endpoint}&force_path_style=true`), {
    credentials: S3RVER_CREDENTIALS,
  });
}

function expectUnavailable(error: unknown): void {
  expect(error).toBeInstanceOf(ProblemError);
  expect((error as ProblemError).code).toBe('dependency_unavailable');
  expect((error as ProblemError).detail).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
  expect(((error as ProblemError).options.cause as { code?: string }).code).toBe('ECONNREFUSED');
}

describe('S3 blob store with the bucket out of reach', () => {
  it('fails a request with dependency_unavailable, the connection error as its cause', async () => {
    const store = await unreachableStore();
    expectUnavailable(await store.stat('media/med_x').catch((error: unknown) => error));
    expectUnavailable(await store.delete('media/med_x').catch((error: unknown) => error));
  });

  it('fails a read stream the same way', async () => {
    const store = await unreachableStore();
    const failure = await new Promise((resolve) =>
      store.read('media/med_x', { start: 0, end: 9 }).on('error', resolve).resume(),
    );
    expectUnavailable(failure);
  });

  it('reports itself not writable to the readiness probe', async () => {
    expect(await (await unreachableStore()).writable()).toBe(false);
  });
});
