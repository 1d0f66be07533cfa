// Temporary directories for a test file, all removed after its tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** A maker of fresh directories named `marquee-<prefix>-…`, each removed once the file's tests end. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `marquee-${prefix}-`));
    dirs.push(dir);
    return dir;
  };
}
