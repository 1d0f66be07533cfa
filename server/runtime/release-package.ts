// The normalized webapp package of a release: every file of the release in one deterministic
// tar.gz (ustar entries in UTF-8 byte order of their paths, mode 0644, owner 0:0, mtime 0, no
// directory entries; raw deflate level 9 in a fixed gzip header). Built once, streamed from the
// release's files into a blob under the release's prefix (so it goes when the release goes).
import { PassThrough, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { APPLICATION_PACKAGE_MAX_BYTES } from '../../sdk/contract/manifest';
import { crc32 as jsCrc32, GZIP_HEADER } from '../../sdk/pack/deterministic-archive';
import { releaseFileKey, releasePrefix } from '../applications/applications';
import type { Services } from '../services';
import type { ReleasePackageTable } from './runtime.tables';

export const packageKey = (releaseId: string) => `${releasePrefix(releaseId)}/package`;

const EPOCH = new Date(0);
const FILE_MODE = 0o644;
/** zlib's native CRC-32 where this Node has it (20.15+), the SDK's otherwise. */
const crc32: (data: Uint8Array, crc: number) => number = (zlib as { crc32?: (d: Uint8Array, c: number) => number }).crc32 ?? jsCrc32;

const building = new WeakMap<Services, Map<string, Promise<ReleasePackageTable>>>();

/** The release's package, built now if it was not yet (concurrent callers share one build). */
export async function ensureReleasePackage(services: Services, release: { id: string; tenant_id: string }): Promise<ReleasePackageTable> {
  const existing = await services.store.db.selectFrom('release_packages').selectAll().where('release_id', '=', release.id).executeTakeFirst();
  if (existing) return existing;
  let inFlight = building.get(services);
  if (!inFlight) building.set(services, (inFlight = new Map()));
  let build = inFlight.get(release.id);
  if (!build) {
    build = buildPackage(services, release).finally(() => inFlight.delete(release.id));
    inFlight.set(release.id, build);
  }
  return build;
}

async function buildPackage(services: Services, release: { id: string; tenant_id: string }): Promise<ReleasePackageTable> {
  const { store, blobs } = services;
  const files = await store.db.selectFrom('release_files').select(['path', 'ordinal', 'bytes']).where('release_id', '=', release.id).execute();
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
        const header = { name: file.path, size: file.bytes, mode: FILE_MODE, uid: 0, gid: 0, uname: '', gname: '', mtime: EPOCH, type: 'file' as const };
        const entry = pack.entry(header, (error) => (error ? reject(error) : resolve()));
        pipeline(blobs.read(releaseFileKey(release.id, file.ordinal)), entry).catch(reject);
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
  const key = packageKey(release.id);
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
  const row: ReleasePackageTable = { release_id: release.id, tenant_id: release.tenant_id, blob_key: key, bytes: info.bytes, sha256: info.sha256, created_at: services.clock.now() };
  await store.db.insertInto('release_packages').values(row).onConflict((oc) => oc.column('release_id').doNothing()).execute();
  return (await store.db.selectFrom('release_packages').selectAll().where('release_id', '=', release.id).executeTakeFirst()) ?? row;
}
