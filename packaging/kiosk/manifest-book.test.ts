// The manifest book keeps each stored document parsed once: lookups share one frozen object until
// the row's document changes.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { manifestFixture } from '../../player/src/playback/manifest.fixtures';
import { AgentDb } from './agent-db';
import { tempDataDir } from './agent.fixtures';
import { ManifestBook } from './manifest-book';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function book(): ManifestBook {
  const dir = tempDataDir();
  dirs.push(dir);
  return new ManifestBook(new AgentDb(dir));
}

describe('the manifest book', () => {
  it('parses a stored manifest once and shares it, frozen, between lookups', () => {
    const b = book();
    const manifest = manifestFixture();
    b.setNext(manifest, '"e1"');
    b.promoteNext();
    const first = b.active()!;
    expect(first.manifest).toEqual(manifest);
    expect(b.active()!.manifest).toBe(first.manifest);
    expect(b.byRevision(manifest.manifestRevision)!.manifest).toBe(first.manifest);
    expect(() => {
      (first.manifest.pages as unknown[]).push({});
    }).toThrow(TypeError);
    expect(Object.isFrozen(first.manifest.pages[0]!.placements[0])).toBe(true);
  });

  it('reads a refreshed document under the same revision, not the one it parsed before', () => {
    const b = book();
    const manifest = manifestFixture();
    b.setNext(manifest, '"e1"');
    b.promoteNext();
    expect(b.active()!.etag).toBe('"e1"');
    const refreshed = structuredClone(manifest);
    refreshed.pages = refreshed.pages.slice(0, 0);
    b.refresh(refreshed, '"e2"');
    expect(b.active()!.etag).toBe('"e2"');
    expect(b.active()!.manifest.pages).toEqual([]);
    expect(b.active()!.role).toBe('active');
  });

  it('forgets what it parsed when cleared', () => {
    const b = book();
    const manifest = manifestFixture();
    b.setNext(manifest, null);
    expect(b.next()!.manifest).toEqual(manifest);
    b.clear();
    expect(b.next()).toBeUndefined();
    expect(b.byRevision(manifest.manifestRevision)).toBeUndefined();
  });
});
