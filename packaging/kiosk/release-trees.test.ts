// Release trees on a box that loses power unannounced: a tree gets its name only once its files
// are on disk, and one left short anyway is unpacked again from its package.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { afterEach, expect, it, vi } from 'vitest';
import { AgentDb } from './agent-db';
import { Mirror } from './mirror';
import { ReleaseTrees } from './release-trees';

const dirs: string[] = [];
const dbs: AgentDb[] = [];
const mirrors: Mirror[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const mirror of mirrors.splice(0)) await mirror.close();
  for (const db of dbs.splice(0)) db.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const FILES = { 'index.html': '<h1>board</h1>', 'assets/app.js': 'console.log("board")' };
const RELEASE = 'rel_board';

async function packageOf(files: Record<string, string>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, text] of Object.entries(files)) pack.entry({ name, mode: 0o644 }, text);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return zlib.gzipSync(Buffer.concat(chunks));
}

/** A mirror holding the release's package, and its trees. */
async function treesWithPackage(): Promise<{ trees: ReleaseTrees; mirror: Mirror; sha256: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-kiosk-trees-'));
  dirs.push(dir);
  const db = new AgentDb(dir);
  dbs.push(db);
  const bytes = await packageOf(FILES);
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  const mirror = new Mirror(db, path.join(dir, 'mirror'), {
    budgetBytes: 1024 ** 2,
    fetch: async () => ({
      status: 200,
      headers: {},
      saveTo: async (file, _flags, hash) => {
        fs.writeFileSync(file, bytes);
        const copy = Buffer.alloc(bytes.length); // a chunk of its own, as the content client hands over
        bytes.copy(copy);
        hash?.give(copy, copy.length, () => {});
      },
      discard: () => {},
    }),
  });
  mirrors.push(mirror);
  await mirror.download({ sha256, bytes: bytes.length, path: '/p', kind: 'package' }, new Set());
  return { trees: new ReleaseTrees(mirror), mirror, sha256 };
}

it('flushes every file, the marker and the directories before the tree gets its name', async () => {
  const { trees, sha256 } = await treesWithPackage();
  const calls: string[] = [];
  const fsync = fs.fsync;
  const fsyncSync = fs.fsyncSync;
  vi.spyOn(fs, 'fsync').mockImplementation((fd, callback) => {
    calls.push('fsync');
    fsync(fd, callback);
  });
  vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
    calls.push('fsync');
    fsyncSync(fd);
  });
  const rename = fs.renameSync;
  vi.spyOn(fs, 'renameSync').mockImplementation((from, to) => {
    calls.push(`rename ${path.basename(String(to))}`);
    rename(from, to);
  });
  await trees.extract(RELEASE, sha256, new Set());
  const named = calls.indexOf(`rename ${RELEASE}`);
  // Two files, the marker, the tree's two directories; then the releases directory after the rename.
  expect(calls.slice(0, named).filter((c) => c === 'fsync').length).toBeGreaterThanOrEqual(5);
  expect(calls.slice(named + 1)).toContain('fsync');
  expect(fs.readFileSync(path.join(trees.treeDir(RELEASE), 'assets/app.js'), 'utf8')).toBe(FILES['assets/app.js']);
});

it('unpacks a tree again whose file a power cut left short, and one with an older marker', async () => {
  const { trees, sha256 } = await treesWithPackage();
  await trees.extract(RELEASE, sha256, new Set());
  const index = path.join(trees.treeDir(RELEASE), 'index.html');
  expect(trees.intact(RELEASE)).toBe(true);

  fs.truncateSync(index, 0);
  expect(trees.has(RELEASE)).toBe(true);
  expect(trees.intact(RELEASE)).toBe(false);
  await trees.extract(RELEASE, sha256, new Set());
  expect(fs.readFileSync(index, 'utf8')).toBe(FILES['index.html']);

  // Before it listed its files, the marker held the package digest only: nothing to check it by.
  fs.writeFileSync(path.join(trees.treeDir(RELEASE), '.complete'), sha256);
  expect(trees.intact(RELEASE)).toBe(false);
  await trees.extract(RELEASE, sha256, new Set());
  expect(trees.intact(RELEASE)).toBe(true);
});

it('unpacks a release once when asked twice at once', async () => {
  const { trees, sha256 } = await treesWithPackage();
  await Promise.all([trees.extract(RELEASE, sha256, new Set()), trees.extract(RELEASE, sha256, new Set())]);
  expect(trees.intact(RELEASE)).toBe(true);
  expect(fs.readdirSync(trees.dir)).toEqual([RELEASE]);
});
