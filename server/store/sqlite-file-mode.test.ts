import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { openStore } from './store';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

it('creates the SQLite database, its WAL and shared-memory files readable by their owner only', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-db-mode-'));
  dirs.push(dir);
  const file = path.join(dir, 'marquee.db');
  const umask = process.umask(0o022); // the usual default: files 0644 unless made otherwise
  try {
    const store = await openStore(`sqlite:${file}`);
    await store.migrate();
    for (const name of ['marquee.db', 'marquee.db-wal', 'marquee.db-shm'])
      expect((fs.statSync(path.join(dir, name)).mode & 0o777).toString(8), name).toBe('600');
    await store.close();
  } finally {
    process.umask(umask);
  }
});
