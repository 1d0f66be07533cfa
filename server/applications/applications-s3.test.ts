// Application releases on an S3 bucket, end to end: the upload stages its files in the bucket,
// publishing copies them under the release's prefix, the package is built from them, and the
// release host serves them (s3rver, D-352).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3BlobStore } from '../blobs/s3-blob-store';
import type { Config } from '../config';
import { mintLaunchTicket } from '../release-host/launch-tickets';
import { publishApp, useEnrolledServer } from '../runtime/runtime.fixtures';
import { CookieJar } from '../testing/harness';
import { credentialsInEnvironment, startS3Server, type TestS3Server } from '../testing/s3-server';
import { releaseFileKey } from './applications';
import { packageKey } from './release-package';

let s3: TestS3Server;
let restoreEnvironment: () => void;
const config: { -readonly [K in keyof Config]?: Config[K] } = {};
beforeAll(async () => {
  s3 = await startS3Server();
  config.blobUrl = s3.blobUrl('apps');
  restoreEnvironment = credentialsInEnvironment();
});
const env = useEnrolledServer({ config });
afterAll(async () => {
  await s3.stop();
  restoreEnvironment();
});

describe('application releases on S3', () => {
  it('stages, publishes, packages and serves a release from the bucket', async () => {
    const blobs = env.server.services.blobs as S3BlobStore;
    const { releaseId, hostLabel } = await publishApp(env.server, env.token, 'from-the-bucket');
    expect(await blobs.stagedTrees()).toEqual([]);
    const files = await env.server.services.store.db
      .selectFrom('release_files')
      .select(['ordinal', 'bytes'])
      .where('release_id', '=', releaseId)
      .execute();
    expect(files.length).toBeGreaterThan(0);
    for (const file of files)
      expect(await blobs.stat(releaseFileKey(releaseId, file.ordinal))).toEqual({ bytes: file.bytes });
    expect((await blobs.stat(packageKey(releaseId)))?.bytes).toBeGreaterThan(0);

    const minted = await env.server.services.store.transaction((work) =>
      mintLaunchTicket(
        env.server.services,
        work,
        {
          tenantId: env.tenantId,
          releaseId,
          screenId: 'scr_lobby',
          contentGeneration: 1,
          manifestRevision: 'man_1',
          grantId: 'gr_s3',
        },
        env.server.clock.now(),
      ),
    );
    const launch = new URL(minted.launchUrl);
    const host = `${hostLabel}.release.localhost:${env.server.port}`;
    expect(launch.host).toBe(host);
    const jar = new CookieJar();
    const frame = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' };
    const granted = await env.server.request('GET', launch.pathname + launch.search, {
      host,
      cookies: jar,
      headers: frame,
    });
    expect(granted.status).toBe(302);
    const script = await env.server.request('GET', '/assets/app.js', {
      host,
      cookies: jar,
      headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' },
    });
    expect(script.status, script.text).toBe(200);
    expect(script.text).toContain('"from-the-bucket"');
  });
});
