// A test that drives Chromium is named *.browser.test.ts, so the browser project runs it one file
// at a time (vitest.config.ts); one hidden among the unit tests would share the cores with them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');

function tests(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : tests(full);
    return /\.test\.tsx?$/.test(e.name) ? [full] : [];
  });
}

const drivesChromium = (file: string) =>
  /from\s+['"](?:playwright|playwright-core|@playwright\/test)['"]|sdk\/testing\/chromium['"]|\.\/chromium['"]/.test(
    fs.readFileSync(file, 'utf8'),
  ) && !file.endsWith('browser-tests.test.ts');

describe('browser tests', () => {
  it('every test that drives Chromium is named *.browser.test.ts', () => {
    const files = ['server', 'sdk', 'player', 'packaging'].flatMap((r) => tests(path.join(repo, r)));
    const hidden = files.filter((f) => drivesChromium(f) && !/\.browser\.test\.tsx?$/.test(f));
    expect(hidden.map((f) => path.relative(repo, f))).toEqual([]);
    expect(files.filter((f) => /\.browser\.test\.tsx?$/.test(f)).length).toBeGreaterThanOrEqual(11);
  });
});
