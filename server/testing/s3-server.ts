// A real S3-protocol server for tests, from npm (s3rver, D-350): listens on 127.0.0.1, keeps its
// objects in a temporary directory, and is gone after stop().
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { S3BlobStore } from '../blobs/s3-blob-store';
import { parseS3BlobUrl } from '../blobs/s3-location';

/** s3rver's built-in account. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3Server {
  endpoint: string;
  /** A fresh bucket each call, as a MARQUEE_BLOB_URL with `prefix` under it. */
  blobUrl(prefix?: string): string;
  /** A store on a fresh bucket (tests pass the server's clock for presigned URL lifetimes). */
  store(prefix?: string, now?: () => number): S3BlobStore;
  stop(): Promise<void>;
}

/**
 * Puts s3rver's account in the standard AWS variables, as an operator would for a real bucket, so a
 * server built from MARQUEE_BLOB_URL finds it through the SDK's default chain. Returns the undo.
 */
export function credentialsInEnvironment(): () => void {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  return () => {
    for (const [name, value] of [
      ['AWS_ACCESS_KEY_ID', saved.id],
      ['AWS_SECRET_ACCESS_KEY', saved.secret],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

let buckets = 0;

export async function startS3Server(): Promise<TestS3Server> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-s3-'));
  const names = Array.from({ length: 8 }, () => `marquee-test-${++buckets}-${process.pid}`);
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    vhostBuckets: false,
    configureBuckets: names.map((name) => ({ name })),
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const blobUrl = (prefix = 'blobs') => {
    const bucket = names.shift();
    if (!bucket) throw new Error('startS3Server: out of buckets; raise the count');
    return `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&force_path_style=true`;
  };
  return {
    endpoint,
    blobUrl,
    store: (prefix, now) => new S3BlobStore(parseS3BlobUrl(blobUrl(prefix)), { credentials: S3RVER_CREDENTIALS, now }),
    async stop() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
