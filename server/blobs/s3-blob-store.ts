// BlobStore on an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, …), selected by MARQUEE_BLOB_URL.
// Objects stream both ways: writes go up in bounded parts, reads come down as the bucket sends them.
import crypto from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { type ProblemError, problem } from '../problem';
import {
  assertBlobKey,
  collect,
  WritesInFlight,
  BlobExistsError,
  BlobTooLargeError,
  type BlobInfo,
  type BlobStore,
  type ByteRange,
  type PutGrant,
  type SignedPut,
  type TreeStaging,
} from './blob-store';
import type { S3Location } from './s3-location';

/** Staged trees live under this key prefix; a marker object `.staging/<name>` says the area exists. */
const STAGING = '.staging';
/** Part size of streamed writes: memory per write is at most PART_BYTES × PARTS_IN_FLIGHT. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;
/** Requests in flight at once for one tree (small objects, copies on publish, deletions). */
const REQUESTS_IN_FLIGHT = 16;
/** Tree objects up to this size are read whole before they are sent; larger ones stream. */
const SMALL_OBJECT_BYTES = 256 * 1024;
/** DeleteObjects takes at most this many keys. */
const DELETE_BATCH = 1000;
/** Connections to the bucket at once (each streaming read holds one until it ends). */
const MAX_CONNECTIONS = 1024;
const CONNECT_TIMEOUT_MS = 5000;
/** The readiness probe gives up after this long. */
const PROBE_TIMEOUT_MS = 3000;

export interface S3BlobStoreOptions {
  /** Milliseconds since the epoch on the server's clock: the presigned URL's lifetime counts from it. */
  now?: () => number;
  /** Explicit credentials (tests); otherwise the SDK's default chain. */
  credentials?: S3ClientConfig['credentials'];
}

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  private readonly now: () => number;
  /** Where presigned PUTs go (the SDK decides path or virtual-host style): known after the first one. */
  uploadOrigin: string | undefined;

  constructor(
    readonly location: S3Location,
    options: S3BlobStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.client = new S3Client({
      endpoint: location.endpoint,
      // The SDK needs a region to sign; MinIO and most others accept any.
      region: location.region ?? process.env.AWS_REGION ?? 'us-east-1',
      forcePathStyle: location.forcePathStyle,
      credentials: options.credentials,
      // No CRC32 of an empty body baked into presigned URLs (the browser's PUT would not match it),
      // and no checksum check on ranged reads, which carry only part of the object.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Every media stream a screen is reading holds one connection to the bucket until it ends;
      // the SDK's default of 50 would queue the 51st screen behind the others.
      requestHandler: {
        httpAgent: { keepAlive: true, maxSockets: MAX_CONNECTIONS },
        httpsAgent: { keepAlive: true, maxSockets: MAX_CONNECTIONS },
        connectionTimeout: CONNECT_TIMEOUT_MS,
      },
    });
    // After the SDK's own retries: a bucket out of reach or refusing the credentials is a dependency
    // that is down, which callers answer as dependency_unavailable (the SDK's error is only logged).
    this.client.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (error) {
          throw unavailable(error) ?? error;
        }
      },
      { step: 'initialize', name: 'marqueeDependencyUnavailable' },
    );
    // Signing is local: the dashboard's pages name the bucket's origin from their first answer on.
    void this.presignPut({
      key: 'media/upload-origin',
      bytes: 1,
      contentType: 'application/octet-stream',
      expiresAt: this.now() + 60_000,
    }).catch(() => undefined);
  }

  /** The bucket key of a blob key. */
  keyOf(key: string): string {
    assertBlobKey(key);
    return this.location.prefix === '' ? key : `${this.location.prefix}/${key}`;
  }

  async write(
    key: string,
    source: Readable | Buffer,
    options: { maxBytes?: number; exclusive?: boolean } = {},
  ): Promise<BlobInfo> {
    const Key = this.keyOf(key);
    const hash = crypto.createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        if (options.maxBytes !== undefined && bytes > options.maxBytes)
          return done(new BlobTooLargeError(options.maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    if (options.exclusive && (await this.stat(key))) throw new BlobExistsError(key);
    const input = Buffer.isBuffer(source) ? Readable.from([source]) : source;
    let failure: unknown;
    input.on('error', (error) => meter.destroy(error));
    meter.on('error', (error) => {
      failure ??= error;
    });
    input.pipe(meter);
    // One PUT when the object fits a part, a multipart upload (completed atomically, aborted on
    // failure) otherwise. Buckets with conditional writes refuse to replace an object under
    // If-None-Match; the stat above covers those without.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key, Body: meter, ...(options.exclusive ? { IfNoneMatch: '*' } : {}) },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      // As pipeline() would: a source nobody reads any more is let go (a request body, a gzip).
      input.destroy();
      if (failure !== undefined) throw failure;
      if (statusOf(error) === 412) throw new BlobExistsError(key);
      throw error;
    }
    if (failure !== undefined) {
      // The part reader may finish before the error surfaces: the object must not stay.
      input.destroy();
      await this.delete(key);
      throw failure;
    }
    return { bytes, sha256: hash.digest('hex') };
  }

  read(key: string, range?: ByteRange): Readable {
    const Key = this.keyOf(key);
    const client = this.client;
    const Bucket = this.location.bucket;
    async function* body(): AsyncGenerator<Buffer> {
      const answer = await client.send(
        new GetObjectCommand({ Bucket, Key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      // Returning early (the reader went away) destroys the response stream, closing its socket.
      const stream = answer.Body as Readable;
      const sent = /^bytes (\d+)-(\d+)\//.exec(answer.ContentRange ?? '');
      if (!range || (sent && Number(sent[1]) === range.start && Number(sent[2]) === range.end)) {
        yield* stream;
        return;
      }
      // A server may ignore Range and send the whole object (RFC 9110 §14.2), or send more than
      // asked: cut the range out of what came.
      let offset = sent ? Number(sent[1]) : 0;
      if (offset > range.start) {
        stream.destroy();
        throw new Error(`the bucket answered ${answer.ContentRange} to bytes=${range.start}-${range.end}`);
      }
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        const from = Math.max(range.start - offset, 0);
        const to = Math.min(range.end + 1 - offset, chunk.length);
        offset += chunk.length;
        if (to > from) yield chunk.subarray(from, to);
        if (offset > range.end) return;
      }
    }
    return Readable.from(body(), { objectMode: false });
  }

  async stat(key: string): Promise<{ bytes: number } | undefined> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.keyOf(key) }),
      );
      return { bytes: head.ContentLength ?? 0 };
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.keyOf(key) }));
  }

  async deletePrefix(prefix: string): Promise<void> {
    await this.deleteKeys(await this.list(`${this.keyOf(prefix)}/`));
  }

  async writable(): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }), {
        abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A presigned PUT straight to the bucket. Content-Type, Content-Length and If-None-Match: * are
   * signed headers, so the bucket refuses another type or length, and (where it supports
   * conditional writes) a second PUT once the object exists.
   */
  async presignPut(grant: PutGrant): Promise<SignedPut> {
    const headers = {
      'Content-Type': grant.contentType,
      'Content-Length': String(grant.bytes),
      'If-None-Match': '*',
    };
    const url = await getSignedUrl(
      this.client,
      new PutObjectCommand({
        Bucket: this.location.bucket,
        Key: this.keyOf(grant.key),
        ContentType: grant.contentType,
        ContentLength: grant.bytes,
        IfNoneMatch: '*',
      }),
      {
        expiresIn: Math.max(1, Math.ceil((grant.expiresAt - this.now()) / 1000)),
        signableHeaders: new Set(['content-type', 'content-length', 'if-none-match']),
      },
    );
    this.uploadOrigin = new URL(url).origin;
    return { url, method: 'PUT', headers, expiresAt: grant.expiresAt };
  }

  private stagingKey(name: string): string {
    if (name.includes('/')) throw new Error(`invalid staging name ${JSON.stringify(name)}`);
    return this.keyOf(`${STAGING}/${name}`);
  }

  async stageTree(name: string): Promise<TreeStaging> {
    const marker = this.stagingKey(name);
    await this.deleteKeys(await this.list(`${marker}/`));
    await this.client.send(
      new PutObjectCommand({ Bucket: this.location.bucket, Key: marker, Body: Buffer.alloc(0), ContentLength: 0 }),
    );
    return new S3TreeStaging(this, `${marker}/`, () => this.discardTree(name));
  }

  async hasStagedTree(name: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.stagingKey(name) }));
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw error;
    }
  }

  async publishTree(name: string, prefix: string): Promise<void> {
    const from = `${this.stagingKey(name)}/`;
    const to = `${this.keyOf(prefix)}/`;
    await this.deletePrefix(prefix);
    const staged = await this.list(from);
    await inParallel(staged, REQUESTS_IN_FLIGHT, async (key) => {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.location.bucket,
          Key: to + key.slice(from.length),
          CopySource: `${this.location.bucket}/${encodeURI(key)}`,
        }),
      );
    });
    // The staged keys are known: the staging goes without listing it again, its marker last.
    await this.deleteKeys(staged);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.stagingKey(name) }));
  }

  async discardTree(name: string): Promise<void> {
    const marker = this.stagingKey(name);
    await this.deleteKeys(await this.list(`${marker}/`));
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: marker }));
  }

  async stagedTrees(): Promise<string[]> {
    const base = `${this.keyOf(STAGING)}/`;
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.location.bucket,
          Prefix: base,
          Delimiter: '/',
          ContinuationToken: token,
        }),
      );
      for (const object of page.Contents ?? []) names.push(object.Key!.slice(base.length));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return names;
  }

  /** Every bucket key starting with `prefix`. */
  private async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) keys.push(object.Key!);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  /** Deletes keys a thousand at a time (one DeleteObjects request each). */
  private async deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const answer = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.location.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = answer.Errors?.[0];
      if (failed) throw new Error(`could not delete ${failed.Key}: ${failed.Code} ${failed.Message}`);
    }
  }

  /** Puts one object of known size under a bucket key (tree staging). */
  async putKnown(Key: string, body: Buffer | Readable, bytes: number): Promise<void> {
    if (Buffer.isBuffer(body)) {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.location.bucket, Key, Body: body, ContentLength: bytes }),
      );
      return;
    }
    await new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key, Body: body },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    }).done();
  }
}

class S3TreeStaging implements TreeStaging {
  private readonly writes = new WritesInFlight(REQUESTS_IN_FLIGHT);
  private readonly names = new Set<string>();

  constructor(
    private readonly store: S3BlobStore,
    private readonly base: string,
    private readonly discard: () => Promise<void>,
  ) {}

  async add(name: string, data: AsyncIterable<Uint8Array>, bytes: number): Promise<void> {
    assertBlobKey(name);
    this.writes.throwIfFailed();
    if (this.names.has(name)) throw new Error(`EEXIST: ${name} is already in this tree`);
    this.names.add(name);
    const key = this.base + name;
    if (bytes > SMALL_OBJECT_BYTES) {
      await this.writes.track(this.store.putKnown(key, Readable.from(data, { objectMode: false }), bytes));
      return;
    }
    const buffer = await collect(data);
    await this.writes.start(() => this.store.putKnown(key, buffer, buffer.length));
  }

  finish(): Promise<void> {
    return this.writes.finish();
  }

  async abort(): Promise<void> {
    await this.writes.settle();
    await this.discard();
  }
}

/**
 * The bucket did not answer (no HTTP status: refused, reset, timed out, no credentials to sign with),
 * failed (5xx after retries) or refused the credentials (403): a dependency_unavailable problem
 * carrying the SDK's error as its cause. Other answers (404, 412) stay the SDK's errors; an abort
 * stays an abort.
 */
function unavailable(error: unknown): ProblemError | undefined {
  if ((error as { name?: unknown } | null)?.name === 'AbortError') return undefined;
  const status = statusOf(error);
  if (status !== undefined && status < 500 && status !== 403) return undefined;
  return problem('dependency_unavailable', 'the blob store is unavailable; retry later', { cause: error });
}

function statusOf(error: unknown): number | undefined {
  if (error instanceof S3ServiceException) return error.$metadata.httpStatusCode;
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

async function inParallel<T>(items: T[], width: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}
