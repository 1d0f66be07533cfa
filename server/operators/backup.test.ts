// Backup and restore end to end, on the engine MARQUEE_TEST_DATABASE_URL names (SQLite's online
// backup, or pg_dump/pg_restore): a server with a project and a ready image is backed up while it
// runs, a fresh installation is restored from the backup, and a server started on it serves the
// same project, credential and bytes. A restore never lands on an installation that has data.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config';
import { image, uploadReady } from '../media/media.fixtures';
import { TestServer } from '../testing/harness';
import { TEST_DATABASE_URL, testDatabase, type TestDatabase } from '../testing/test-database';
import { createBackup, runBackupCommand } from './backup';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});
const require = createRequire(import.meta.url);
const temp = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
};

describe('backup and restore', () => {
  let original: TestServer;
  let restored: TestServer | undefined;
  let target: TestDatabase | undefined;
  const backupDir = path.join(temp('marquee-backup-'), 'backup');
  let token: string;
  let mediaId: string;
  let bytes: Buffer;

  beforeAll(async () => {
    original = await TestServer.start();
    ({ token } = await original.enroll());
    bytes = await image('png', 96, 64);
    mediaId = (await uploadReady(original, token, bytes, 'image/png')).id;
  });
  afterAll(async () => {
    await original.stop();
    await restored?.stop();
    await target?.drop();
  });

  const envOf = (server: { dataDir: string; databaseUrl: string }) => ({
    MARQUEE_DATA_DIR: server.dataDir,
    MARQUEE_DATABASE_URL: server.databaseUrl,
  });

  it('backs up a running server and restores it into a fresh installation that serves the same data', async () => {
    const lines: string[] = [];
    const source = { dataDir: original.dataDir, databaseUrl: original.config.databaseUrl };
    expect(await runBackupCommand(['create', backupDir], envOf(source), (l) => lines.push(l))).toBe(0);
    expect(lines.at(-1)).toBe(`backup complete in ${backupDir}`);
    // Written after the backup began: not in it.
    const later = await original.enroll();

    const dataDir = temp('marquee-restored-');
    // An empty database of the new data dir (on PostgreSQL; SQLite's file is the restore's to make).
    target = await testDatabase(dataDir, { empty: true });
    const restoreLines: string[] = [];
    const umask = process.umask(0o022); // the usual default: files 0644 unless made otherwise
    try {
      expect(
        await runBackupCommand(['restore', backupDir], envOf({ dataDir, databaseUrl: target.url }), (l) =>
          restoreLines.push(l),
        ),
        restoreLines.join('\n'),
      ).toBe(0);
    } finally {
      process.umask(umask);
    }
    if (target.url.startsWith('sqlite:')) {
      // The restored database holds what the original did: its owner's alone, as a new one is (D-449).
      const file = target.url.slice('sqlite:'.length);
      expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    }

    restored = await TestServer.start({ dataDir });
    expect(restored.config.databaseUrl).toBe(target.url);
    const media = await restored.request('GET', `/api/v1/media/${mediaId}`, { token });
    expect(media.status, media.text).toBe(200);
    expect(media.json()).toMatchObject({ id: mediaId, state: 'ready' });
    const content = await restored.request('GET', `/api/v1/media/${mediaId}/content`, { token });
    expect(content.status).toBe(200);
    expect(content.body.equals(bytes)).toBe(true);
    const missing = await restored.request('GET', '/api/v1/media', { token: later.token });
    expect(missing.status).toBe(401);
  });

  it('refuses to restore over an installation that has data, and says why', async () => {
    const lines: string[] = [];
    const into = { dataDir: original.dataDir, databaseUrl: original.config.databaseUrl };
    expect(await runBackupCommand(['restore', backupDir], envOf(into), (l) => lines.push(l))).toBe(1);
    expect(lines.join('\n')).toMatch(/not empty|exists/);
    const still = await original.request('GET', `/api/v1/media/${mediaId}`, { token });
    expect(still.status).toBe(200);
  });

  it.skipIf(!TEST_DATABASE_URL)(
    'says so, not a stack trace, when it cannot reach the database to restore into',
    async () => {
      const lines: string[] = [];
      const url = new URL(original.config.databaseUrl);
      url.pathname = '/marquee_never_created';
      const into = { dataDir: temp('marquee-fresh-'), databaseUrl: url.toString() };
      expect(await runBackupCommand(['restore', backupDir], envOf(into), (l) => lines.push(l))).toBe(1);
      expect(lines).toEqual([
        'marquee backup: cannot connect to the database to restore into: database "marquee_never_created" does not exist',
      ]);
    },
  );

  it('leaves nothing behind when a backup fails part way, so it can run again into the same directory', async () => {
    const dataDir = temp('marquee-broken-');
    const databaseUrl = `sqlite:${path.join(dataDir, 'marquee.db')}`;
    new Database(path.join(dataDir, 'marquee.db')).close();
    // The database copies; the secret key cannot be read as a file (a directory stands there).
    fs.mkdirSync(path.join(dataDir, 'secret.key'));
    const env = { MARQUEE_DATA_DIR: dataDir, MARQUEE_DATABASE_URL: databaseUrl };
    const lines: string[] = [];
    for (const dir of [path.join(temp('marquee-backup-'), 'fresh'), temp('marquee-backup-empty-')]) {
      const existed = fs.existsSync(dir);
      await expect(runBackupCommand(['create', dir], env, (l) => lines.push(l))).rejects.toThrow();
      expect(lines).toContain('database (sqlite) copied');
      expect(lines.at(-1)).toBe(`backup failed: nothing was left in ${dir}`);
      expect(existed ? fs.readdirSync(dir) : fs.existsSync(dir)).toEqual(existed ? [] : false);
    }
    // Only what the backup wrote goes: a file another process put there meanwhile stays.
    const shared = temp('marquee-backup-shared-');
    await expect(
      createBackup(loadConfig(env, []), shared, (line) => {
        if (line === 'database (sqlite) copied') fs.writeFileSync(path.join(shared, 'notes.txt'), 'not ours');
      }),
    ).rejects.toThrow();
    expect(fs.readdirSync(shared)).toEqual(['notes.txt']);
  });

  it('copies the blob directory as it stands: through a symlink, without writes in progress, past files that go meanwhile', async () => {
    const dataDir = temp('marquee-live-');
    new Database(path.join(dataDir, 'marquee.db')).close();
    // Replicas share one directory through a symlink named blobs (docs/operations.md).
    const shared = temp('marquee-shared-blobs-');
    fs.mkdirSync(path.join(shared, 'media'));
    fs.mkdirSync(path.join(shared, '.tmp'));
    fs.writeFileSync(path.join(shared, 'media', 'med_kept'), 'published bytes');
    fs.writeFileSync(path.join(shared, 'media', 'med_gone'), 'removed during the copy');
    fs.writeFileSync(path.join(shared, '.tmp', 'upload-in-progress'), 'half an upload');
    fs.symlinkSync(shared, path.join(dataDir, 'blobs'));
    const copyFile = fs.copyFileSync;
    // Removed between the listing and its copy, as a temp file renamed into place or a discarded staging file is.
    const spy = vi.spyOn(fs, 'copyFileSync').mockImplementation((source, target, mode) => {
      if (String(source).endsWith('med_gone')) fs.rmSync(source as string);
      copyFile(source, target, mode);
    });
    const backup = path.join(temp('marquee-backup-'), 'live');
    const lines: string[] = [];
    try {
      expect(await runBackupCommand(['create', backup], { MARQUEE_DATA_DIR: dataDir }, (l) => lines.push(l))).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(lines.at(-1)).toBe(`backup complete in ${backup}`);
    expect(fs.lstatSync(path.join(backup, 'blobs')).isDirectory()).toBe(true);
    expect(fs.readdirSync(path.join(backup, 'blobs'))).toEqual(['media']);
    expect(fs.readdirSync(path.join(backup, 'blobs', 'media'))).toEqual(['med_kept']);
    expect(fs.readFileSync(path.join(backup, 'blobs', 'media', 'med_kept'), 'utf8')).toBe('published bytes');

    // Restored into a fresh replica whose blobs symlink names an empty shared directory: the objects land there.
    const freshDir = temp('marquee-fresh-replica-');
    const freshShared = temp('marquee-fresh-shared-');
    fs.symlinkSync(freshShared, path.join(freshDir, 'blobs'));
    expect(await runBackupCommand(['restore', backup], { MARQUEE_DATA_DIR: freshDir }, () => {})).toBe(0);
    expect(fs.readFileSync(path.join(freshShared, 'media', 'med_kept'), 'utf8')).toBe('published bytes');
  });

  it('copies a SQLite database that another process keeps writing to, as a busy server does', async () => {
    const dataDir = temp('marquee-busy-');
    const file = path.join(dataDir, 'marquee.db');
    const setup = new Database(file);
    setup.pragma('journal_mode = WAL');
    setup.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)');
    const insert = setup.prepare('INSERT INTO t (v) VALUES (?)');
    setup.transaction(() => {
      for (let i = 0; i < 16_000; i++) insert.run(Buffer.alloc(2000, i % 256)); // about 8,000 pages
    })();
    setup.close();
    // The server: a write every millisecond, from another process. A copy in steps of 100 pages
    // started again at each and never ended.
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require(${JSON.stringify(require.resolve('better-sqlite3'))}))(${JSON.stringify(file)});
         db.pragma('journal_mode = WAL');
         const update = db.prepare('UPDATE t SET v = ? WHERE id = ?');
         let n = 0;
         setInterval(() => update.run(Buffer.alloc(2000, ++n % 256), 1 + Math.floor(Math.random() * 16000)), 1);
         process.stdout.write('writing\\n');`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise((resolve) => writer.stdout.once('data', resolve));
      const backup = path.join(temp('marquee-backup-'), 'busy');
      const done = runBackupCommand(['create', backup], { MARQUEE_DATA_DIR: dataDir }, () => {});
      const late = new Promise((resolve) => setTimeout(resolve, 5_000, 'still copying after 5 s'));
      expect(await Promise.race([done, late])).toBe(0);
      const copy = new Database(path.join(backup, 'marquee.db'), { readonly: true });
      expect(copy.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 16_000 });
      copy.close();
    } finally {
      writer.kill();
    }
  }, 15_000);

  it('keeps the database copy its owner’s alone, in the backup and once restored, as the server makes it', async () => {
    const mode = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);
    const copy = path.join(backupDir, TEST_DATABASE_URL?.startsWith('postgres') ? 'marquee.pgdump' : 'marquee.db');
    expect(mode(copy)).toBe('600');
    if (TEST_DATABASE_URL?.startsWith('postgres')) return;
    const umask = process.umask(0o022);
    try {
      const dataDir = temp('marquee-restored-mode-');
      expect(await runBackupCommand(['restore', backupDir], { MARQUEE_DATA_DIR: dataDir }, () => {})).toBe(0);
      expect(mode(path.join(dataDir, 'marquee.db'))).toBe('600');
    } finally {
      process.umask(umask);
    }
  });

  it('refuses a directory that holds no finished backup', async () => {
    const lines: string[] = [];
    const empty = temp('marquee-not-a-backup-');
    const env = { MARQUEE_DATA_DIR: temp('marquee-fresh-') };
    expect(await runBackupCommand(['restore', empty], env, (l) => lines.push(l))).toBe(1);
    expect(lines).toEqual([`marquee backup: ${empty} holds no finished backup (no backup.json)`]);
  });
});
