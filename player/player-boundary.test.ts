// The clients import sdk/, never the server: the player (and the dashboard and the kiosk's
// packaging/, checked here too until they have tests of their own) must build and run without it.
// Tests may drive a real server; only sources are held to this.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = path.dirname(import.meta.dirname);
const server = path.join(repo, 'server') + path.sep;

function sources(dir: string): string[] {
  if (!fs.existsSync(dir)) return []; // dashboard/ and packaging/ are not built yet
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(full);
    // Tests may drive a real server; their fixtures go through sdk/ like the clients they stand for.
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [full] : [];
  });
}

describe('client boundary', () => {
  it.each(['player', 'dashboard', 'packaging'])('no %s/ source imports server/', (client) => {
    const offenders = sources(path.join(repo, client)).filter((file) => {
      const text = fs.readFileSync(file, 'utf8');
      return [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].some(([, spec]) => {
        if (!spec!.startsWith('.')) return false;
        return path.resolve(path.dirname(file), spec!).startsWith(server);
      });
    });
    expect(offenders.map((f) => path.relative(repo, f))).toEqual([]);
  });
});
