import { describe, expect, it } from 'vitest';
import { CAPABILITY_HANDLE_MIN_LENGTH, launchRoute, packageRoute, WEBAPP_PACKAGE_CONTENT_TYPE, WEBAPP_PACKAGE_VERSION, type RuntimePlacement } from '../../../sdk/contract/manifest';
import { manifestFixture, pageFixture, REVISION } from '../playback/manifest.fixtures';
import { CAPABILITY_REFRESH_MARGIN_MS, MANIFEST_POLL_MS, manifestRefreshDelay } from './player-controller';

function application(expiresAt: string): RuntimePlacement {
  return {
    id: 'board',
    content: {
      type: 'application',
      applicationId: 'app_1',
      releaseId: 'rel_1',
      launchUrl: launchRoute(REVISION, 'rel_1'),
      origin: 'http://abc.release.localhost:8080',
      protocol: '1',
      grantId: 'gr_fixture',
      package: { version: WEBAPP_PACKAGE_VERSION, url: packageRoute(REVISION, 'rel_1'), bytes: 10, sha256: 'b'.repeat(64), entrypoint: 'index.html', contentType: WEBAPP_PACKAGE_CONTENT_TYPE },
    },
    rect: { x: 0, y: 0, width: 1920, height: 1080 },
    layer: 0,
    contentFit: 'fill',
    controller: true,
    capabilityHandle: 'c'.repeat(CAPABILITY_HANDLE_MIN_LENGTH),
    capabilityExpiresAt: expiresAt,
  };
}

describe('manifest refresh', () => {
  const now = Date.parse('2026-03-02T11:00:00Z');

  it('polls every ten minutes when the manifest holds no capabilities', () => {
    expect(manifestRefreshDelay(manifestFixture(), now)).toBe(MANIFEST_POLL_MS);
  });

  it('refetches a minute before the earliest placement capability expires', () => {
    const manifest = manifestFixture({
      pages: [
        pageFixture('a', { advance: { mode: 'application', maxMs: 60_000 }, placements: [application('2026-03-02T11:05:00Z')] }),
        pageFixture('b', { advance: { mode: 'application', maxMs: 60_000 }, placements: [application('2026-03-02T11:04:00Z')] }),
      ],
    });
    expect(manifestRefreshDelay(manifest, now)).toBe(4 * 60_000 - CAPABILITY_REFRESH_MARGIN_MS);
  });

  it('never spins on capabilities that already expired', () => {
    const manifest = manifestFixture({ pages: [pageFixture('a', { advance: { mode: 'application', maxMs: 60_000 }, placements: [application('2026-03-02T10:00:00Z')] })] });
    expect(manifestRefreshDelay(manifest, now)).toBe(5_000);
  });
});
