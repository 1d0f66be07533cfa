// sdk/ is what the server, the player and integrators import: it must never reach into them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const sdk = import.meta.dirname;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'examples' ? [] : sources(full);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

describe('sdk boundary', () => {
  it('no SDK source imports server/ or player/', () => {
    const offenders = sources(sdk).filter((file) => {
      const text = fs.readFileSync(file, 'utf8');
      return [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].some(([, spec]) => {
        if (!spec!.startsWith('.')) return false;
        const target = path.resolve(path.dirname(file), spec!);
        return !target.startsWith(sdk + path.sep);
      });
    });
    expect(offenders.map((f) => path.relative(sdk, f))).toEqual([]);
  });
});
