// What makes a write survive a power cut on the kiosk's disk, beside each file's own flush.
import fs from 'node:fs';

/** Flushes a directory's entries: the names of the files in it, or of a tree renamed into it. */
export function syncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
