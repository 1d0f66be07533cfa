// `npm run backup -- create <dir>` and `npm run backup -- restore <dir>` on the server host: a
// consistent copy of one installation (database first, then the blob directory and secret.key) and
// its restoration into a fresh one. Reads MARQUEE_DATA_DIR / MARQUEE_DATABASE_URL / MARQUEE_BLOB_URL
// like npm start. docs/operations.md says when to run them and what they leave to the operator.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ConfigError, loadConfig, type Config } from '../config';

const run = promisify(execFile);

const USAGE = `usage: npm run backup -- create <dir>    (the server may keep running)
       npm run backup -- restore <dir>   (into a fresh installation; its server stopped)
(reads MARQUEE_DATA_DIR / MARQUEE_DATABASE_URL / MARQUEE_BLOB_URL like npm start)`;

/** What a backup directory holds, written last: a directory without it is an unfinished backup. */
interface Manifest {
  format: 1;
  engine: 'sqlite' | 'postgres';
  created_at: string;
  /** Whether blobs/ holds the blob directory; false when the blobs live in a bucket. */
  blobs: boolean;
  secret_key: boolean;
}

const MANIFEST = 'backup.json';
const SQLITE_FILE = 'marquee.db';
const PG_DUMP_FILE = 'marquee.pgdump';
const BLOBS_DIR = 'blobs';
const SECRET_KEY_FILE = 'secret.key';
/** As many pages as one step of SQLite's online backup may copy: all of them. */
const ALL_PAGES = 0x7fffffff;
/** The database copy holds people's addresses and credential hashes: its owner's alone, as the server makes it. */
const DATABASE_FILE_MODE = 0o600;
/** The local blob store's writes in progress (LocalBlobStore empties it at start). */
const BLOB_TEMP_DIR = '.tmp';
/** Every name a backup writes into its directory. */
const BACKUP_ENTRIES = [SQLITE_FILE, PG_DUMP_FILE, BLOBS_DIR, SECRET_KEY_FILE, MANIFEST];

export class BackupError extends Error {}

export async function runBackupCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
): Promise<number> {
  const [command, dir] = args;
  if ((command !== 'create' && command !== 'restore') || !dir) {
    print(USAGE);
    return 2;
  }
  try {
    const config = loadConfig(env, []);
    if (command === 'create') await createBackup(config, path.resolve(dir), print);
    else await restoreBackup(config, path.resolve(dir), print);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof BackupError) {
      print(`marquee backup: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

/**
 * Database first, then blobs: blobs are immutable once published and written by rename, so a copy
 * taken after the database's holds every object the database refers to (perhaps more).
 */
export async function createBackup(config: Config, dir: string, print: (line: string) => void): Promise<void> {
  const existed = fs.existsSync(dir);
  if (existed && fs.readdirSync(dir).length > 0) throw new BackupError(`${dir} is not empty`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    await copyInto(config, dir, print);
  } catch (error) {
    // A failed backup leaves nothing half-written (it was empty or absent before), so it can run again.
    // Only the names a backup writes: anything else that appeared meanwhile is not ours to remove.
    for (const name of BACKUP_ENTRIES) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    if (!existed && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
    print(`backup failed: nothing was left in ${dir}`);
    throw error;
  }
}

async function copyInto(config: Config, dir: string, print: (line: string) => void): Promise<void> {
  const engine = engineOf(config.databaseUrl);
  if (engine === 'sqlite') {
    // SQLite's online backup: a consistent copy while the server keeps writing.
    const db = new Database(sqliteFile(config.databaseUrl), { readonly: true, fileMustExist: true });
    try {
      // In one step: a copy in steps starts again whenever another connection (the server) writes
      // between two of them, so on a busy server it may never end. One step reads one snapshot, and
      // in WAL mode the server's writes go on meanwhile.
      await db.backup(path.join(dir, SQLITE_FILE), { progress: () => ALL_PAGES });
    } finally {
      db.close();
    }
  } else {
    // One snapshot in pg_dump's custom format (compressed; pg_restore picks it apart).
    await postgresTool('pg_dump', config.databaseUrl, [
      '--format=custom',
      '--no-owner',
      `--file=${path.join(dir, PG_DUMP_FILE)}`,
    ]);
  }
  fs.chmodSync(path.join(dir, engine === 'sqlite' ? SQLITE_FILE : PG_DUMP_FILE), DATABASE_FILE_MODE);
  print(`database (${engine}) copied`);
  const blobs = !config.blobUrl;
  if (blobs) {
    copyBlobDirectory(path.join(config.dataDir, 'blobs'), path.join(dir, BLOBS_DIR));
    print('blob directory copied');
  } else {
    print(`blobs are in ${config.blobUrl}: copy the bucket now (see docs/operations.md, Backups)`);
  }
  const secretKey = path.join(config.dataDir, 'secret.key');
  const hasSecret = fs.existsSync(secretKey);
  if (hasSecret) fs.copyFileSync(secretKey, path.join(dir, SECRET_KEY_FILE));
  const manifest: Manifest = {
    format: 1,
    engine,
    created_at: new Date().toISOString(),
    blobs,
    secret_key: hasSecret,
  };
  fs.writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  print(`backup complete in ${dir}`);
}

/**
 * Into a fresh installation only (an empty database, no blobs of its own), so a restore never
 * mixes two installations' rows; the next start runs any newer migrations.
 */
export async function restoreBackup(config: Config, dir: string, print: (line: string) => void): Promise<void> {
  const manifest = readManifest(dir);
  const engine = engineOf(config.databaseUrl);
  if (manifest.engine !== engine) {
    throw new BackupError(`the backup is of a ${manifest.engine} database; MARQUEE_DATABASE_URL names ${engine}`);
  }
  if (manifest.blobs && config.blobUrl) {
    throw new BackupError('the backup holds a blob directory; unset MARQUEE_BLOB_URL or copy blobs/ into the bucket');
  }
  const blobTarget = path.join(config.dataDir, 'blobs');
  if (manifest.blobs && fs.existsSync(blobTarget) && fs.readdirSync(blobTarget).length > 0) {
    throw new BackupError(`${blobTarget} is not empty: restore into a fresh installation`);
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  if (engine === 'sqlite') {
    const target = sqliteFile(config.databaseUrl);
    if (fs.existsSync(target)) throw new BackupError(`${target} exists: restore into a fresh installation`);
    fs.copyFileSync(path.join(dir, SQLITE_FILE), target);
    // A copy keeps the backup's mode: the restored database is its owner's alone, as a new one is
    // (D-449, D-475, D-484). SQLite gives -wal and -shm its mode.
    fs.chmodSync(target, DATABASE_FILE_MODE);
  } else {
    if (!(await postgresIsEmpty(config.databaseUrl))) {
      throw new BackupError('the PostgreSQL database is not empty: restore into a freshly created one');
    }
    await postgresTool('pg_restore', config.databaseUrl, [
      '--no-owner',
      '--exit-on-error',
      '--single-transaction',
      path.join(dir, PG_DUMP_FILE),
    ]);
  }
  print(`database (${engine}) restored`);
  if (manifest.blobs) {
    // Into the directory a blobs symlink names (replicas sharing one), as the backup read it.
    copyBlobDirectory(path.join(dir, BLOBS_DIR), blobTarget);
    print('blob directory restored');
  } else {
    print(
      `blobs were in a bucket: copy them back to ${config.blobUrl ?? 'the bucket'} (see docs/operations.md, Backups)`,
    );
  }
  const secretKey = path.join(config.dataDir, 'secret.key');
  if (manifest.secret_key && !fs.existsSync(secretKey)) {
    fs.copyFileSync(path.join(dir, SECRET_KEY_FILE), secretKey);
    fs.chmodSync(secretKey, 0o600);
  }
  print('restore complete: start the server');
}

/**
 * The blob directory as it stands while the server runs (or a backup's, into a fresh one). `.tmp` holds writes in progress, which the
 * server removes at its next start, so it stays out. A file or directory that goes between its
 * listing and its copy (an upload's temp file renamed into place, a staged tree published or
 * discarded) is skipped: published objects are immutable, and one the database copy refers to was
 * published before it.
 */
function copyBlobDirectory(from: string, to: string, top = true): void {
  fs.mkdirSync(to, { recursive: true });
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(from, { withFileTypes: true });
  } catch (error) {
    if (isGone(error)) return;
    throw error;
  }
  for (const entry of entries) {
    if (top && entry.name === BLOB_TEMP_DIR) continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) copyBlobDirectory(source, target, false);
    else {
      try {
        fs.copyFileSync(source, target);
      } catch (error) {
        if (!isGone(error)) throw error;
      }
    }
  }
}

function isGone(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

function readManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST);
  if (!fs.existsSync(file)) throw new BackupError(`${dir} holds no finished backup (no ${MANIFEST})`);
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
  if (manifest.format !== 1) throw new BackupError(`${MANIFEST} has format ${manifest.format}; this build reads 1`);
  return manifest;
}

function engineOf(url: string): 'sqlite' | 'postgres' {
  return url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

function sqliteFile(url: string): string {
  return url.slice('sqlite:'.length);
}

/** Runs pg_dump or pg_restore on the database the URL names; the password goes by environment, not argv. */
async function postgresTool(tool: 'pg_dump' | 'pg_restore', url: string, args: string[]): Promise<void> {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  const target = tool === 'pg_dump' ? [parsed.toString()] : [`--dbname=${parsed.toString()}`];
  try {
    await run(tool, [...args, ...target], { env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) } });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    throw new BackupError(`${tool} failed: ${stderr || (error as Error).message}`);
  }
}

async function postgresIsEmpty(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    // Not created yet, a wrong password, a server down: the operator's to fix (the message names no password).
    throw new BackupError(`cannot connect to the database to restore into: ${(error as Error).message}`);
  }
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_tables WHERE schemaname = current_schema()`,
    );
    return Number(rows[0]!.n) === 0;
  } finally {
    await client.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runBackupCommand(process.argv.slice(2), process.env, (line) => console.log(line));
}
