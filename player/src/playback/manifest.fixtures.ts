// Manifests for unit tests: valid by `parseRuntimeManifest` on RUNTIME_ORIGIN unless a test breaks them.
import {
  CANVAS_CONTRACT_VERSION,
  mediaRoute,
  type RuntimeManifest,
  type RuntimePage,
  type RuntimePlacement,
} from '../../../sdk/contract/manifest';

export const RUNTIME_ORIGIN = 'http://localhost:8080';
export const REVISION = 'man_fixture1';
const SHA = 'a'.repeat(64);

export function imagePlacement(
  id: string,
  mediaIds: string[],
  options: Partial<{ oneAtATime: boolean; layer: number; revision: string }> = {},
): RuntimePlacement {
  const revision = options.revision ?? REVISION;
  return {
    id,
    content: {
      type: 'image',
      items: mediaIds.map((mediaId) => ({
        mediaId,
        src: mediaRoute(revision, mediaId),
        intrinsicSize: { width: 1920, height: 1080 },
        sha256: SHA,
        bytes: 1000,
        contentType: 'image/png',
      })),
      oneAtATime: options.oneAtATime ?? mediaIds.length > 1,
      grantId: 'gr_fixture',
    },
    rect: { x: 0, y: 0, width: 1920, height: 1080 },
    layer: options.layer ?? 0,
    contentFit: 'cover',
  };
}

export function pageFixture(id: string, overrides: Partial<RuntimePage> = {}): RuntimePage {
  return {
    contractVersion: CANVAS_CONTRACT_VERSION,
    id,
    canvas: { width: 1920, height: 1080, viewportFit: 'contain', background: '#000000FF' },
    transition: { type: 'crossfade', durationMs: 200 },
    advance: { mode: 'duration', afterMs: 5000 },
    placements: [imagePlacement('hero', [`med_${id}`])],
    ...overrides,
  };
}

export function manifestFixture(overrides: Partial<RuntimeManifest> = {}): RuntimeManifest {
  return {
    schemaVersion: 2,
    manifestRevision: REVISION,
    grantId: 'gr_fixture',
    contentGeneration: 1,
    screenId: 'scr_fixture',
    screenLabel: 'Lobby',
    playlistId: 'pl_fixture',
    playlistRevision: 1,
    generatedAt: '2026-03-02T11:00:00Z',
    pages: [pageFixture('welcome')],
    ...overrides,
  };
}
