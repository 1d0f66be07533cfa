// The normalized webapp package of a release: every file of the release in one deterministic
// tar.gz (ustar entries in UTF-8 byte order of their paths, mode 0644, owner 0:0, mtime 0, no
// directory entries; raw deflate level 9 in a fixed gzip header), written into a blob under the
// release's prefix (so it goes when the release goes). A background queue builds it as soon as the
// release is published; requests only ever read the stored package, and a release that has none
// yet (still queued, published before this queue existed, interrupted by a restart, or whose build
// failed) is asked of the queue again on demand.
import { PassThrough, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { APPLICATION_PACKAGE_MAX_BYTES } from '../../sdk/contract/manifest';
import { crc32 as jsCrc32, GZIP_HEADER } from '../../sdk/pack/deterministic-archive';
import type { ReleasePackageTable } from '../runtime/runtime.tables';
import type { Services } from '../services';
import type { Db, Tx } from '../store/store';
import { releaseFileKey, releasePrefix } from './applications';
import type { ReleaseRef } from './package-builds';

export const packageKey = (releaseId: string) => `${releasePrefix(releaseId)}/package`;

/** Retry-After of a manifest waiting for a package that is queued or being built (a large one takes seconds). */
export const PACKAGE_PENDING_RETRY_AFTER_S = 10;

const EPOCH = new Date(0);
const FILE_MODE = 0o644;
/** zlib's native CRC-32 where this Node has it (20.15+), the SDK's otherwise. */
const crc32: (data: Uint8Array, crc: number) => number =
  (zlib as { crc32?: (d: Uint8Array, c: number) => number }).crc32 ?? jsCrc32;

/** The package blob as written: where it is and what it holds. */
export type PackageBlob = Pick<ReleasePackageTable, 'blob_key' | 'bytes' | 'sha256'>;

/** Writes the release's package blob from its stored files (slow: never inside a transaction or a request). */
export async function writeReleasePackage(services: Services, releaseId: string): Promise<PackageBlob> {
  const { store, blobs } = services;
  const files = await store.db
    .selectFrom('release_files')
    .select(['path', 'ordinal', 'bytes'])
    .where('release_id', '=', releaseId)
    .execute();
  files.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));

  const pack = tar.pack();
  let crc = 0;
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      crc = crc32(chunk, crc);
      size = (size + chunk.length) % 2 ** 32;
      done(null, chunk);
    },
  });
  const gzip = new PassThrough();
  gzip.write(GZIP_HEADER);

  const entries = (async () => {
    for (const file of files) {
      await new Promise<void>((resolve, reject) => {
        const header = {
          name: file.path,
          size: file.bytes,
          mode: FILE_MODE,
          uid: 0,
          gid: 0,
          uname: '',
          gname: '',
          mtime: EPOCH,
          type: 'file' as const,
        };
        const entry = pack.entry(header, (error) => (error ? reject(error) : resolve()));
        pipeline(blobs.read(releaseFileKey(releaseId, file.ordinal)), entry).catch(reject);
      });
    }
    pack.finalize();
  })();
  const compress = pipeline(pack, measure, zlib.createDeflateRaw({ level: 9 }), gzip, { end: false }).then(() => {
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc >>> 0, 0);
    trailer.writeUInt32LE(size, 4);
    gzip.end(trailer);
  });
  const key = packageKey(releaseId);
  const written = blobs.write(key, gzip, { maxBytes: APPLICATION_PACKAGE_MAX_BYTES });
  try {
    await Promise.all([entries, compress]);
  } catch (error) {
    pack.destroy();
    gzip.destroy(error as Error);
    await written.catch(() => undefined);
    throw error;
  }
  const info = await written;
  return { blob_key: key, bytes: info.bytes, sha256: info.sha256 };
}

/**
 * Records a written package, only for a release still `ready` (a rebuild writes the same bytes,
 * so the first record stands). False when the release was deleted meanwhile: nothing is recorded,
 * and the caller removes what it wrote. Run it in a transaction, so a delete cannot come between.
 */
export async function recordReleasePackage(
  db: Db | Tx,
  release: ReleaseRef,
  blob: PackageBlob,
  now: number,
): Promise<boolean> {
  if (!(await releaseIsLive(db, release.id))) return false;
  await db
    .insertInto('release_packages')
    .values({ release_id: release.id, tenant_id: release.tenant_id, ...blob, created_at: now })
    .onConflict((oc) => oc.column('release_id').doNothing())
    .execute();
  return true;
}

async function releaseIsLive(db: Db | Tx, releaseId: string): Promise<boolean> {
  const row = await db
    .selectFrom('releases')
    .select('id')
    .where('id', '=', releaseId)
    .where('state', '=', 'ready')
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** The stored packages of these releases, by release id (releases without one are absent). */
export async function storedPackages(db: Db | Tx, releaseIds: string[]): Promise<Map<string, ReleasePackageTable>> {
  if (releaseIds.length === 0) return new Map();
  const rows = await db.selectFrom('release_packages').selectAll().where('release_id', 'in', releaseIds).execute();
  return new Map(rows.map((row) => [row.release_id, row]));
}

/**
 * Builds one release's package, unless it is stored already or the release went (the queue in
 * package-builds.ts runs this in the background, one release at a time).
 */
export async function buildReleasePackage(services: Services, release: ReleaseRef): Promise<void> {
  const { blobs, clock, store } = services;
  // A release deleted while its build waited has nothing left to package.
  if (!(await releaseIsLive(store.db, release.id))) return;
  if ((await storedPackages(store.db, [release.id])).size > 0) return;
  const blob = await writeReleasePackage(services, release.id);
  const recorded = await store.transaction((work) => recordReleasePackage(work.db, release, blob, clock.now()));
  // Deleted while it was built: the delete's file removal may have run before this write.
  if (!recorded) await blobs.deletePrefix(releasePrefix(release.id));
}

/** The stored package of a ready, live release of the tenant, for protected delivery; undefined otherwise. */
export async function deliverablePackage(
  db: Db | Tx,
  tenantId: string,
  releaseId: string,
): Promise<{ id: string; blob_key: string; bytes: number; sha256: string } | undefined> {
  return db
    .selectFrom('releases')
    .innerJoin('release_packages', 'release_packages.release_id', 'releases.id')
    .select(['releases.id', 'release_packages.blob_key', 'release_packages.bytes', 'release_packages.sha256'])
    .where('releases.id', '=', releaseId)
    .where('releases.tenant_id', '=', tenantId)
    .where('releases.state', '=', 'ready')
    .where('releases.deleted_at', 'is', null)
    .executeTakeFirst();
}
