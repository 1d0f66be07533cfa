// Routes are "parse, one domain call, reply": a route file states its policy and calls its feature's
// domain functions, which own the queries. This holds every *.routes.ts to it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const server = import.meta.dirname;

function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return routeFiles(full);
    return e.name.endsWith('.routes.ts') ? [full] : [];
  });
}

/** Query-builder calls and raw SQL: what only domain modules write. */
const QUERY = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(|\bsql`|from ['"]kysely['"]/;

describe('route files', () => {
  it('hold no queries of their own', () => {
    const files = routeFiles(server);
    expect(files.length).toBeGreaterThan(10);
    const offenders = files
      .filter((file) => QUERY.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(server, file));
    expect(offenders).toEqual([]);
  });
});
