// The built command is self-contained: copied into an empty folder (no node_modules, no sources) it
// runs, packs an application (tar-stream, zod, commander are inside) and prints its version.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshBundle } from './testing/cli-bundle';
import { CLI_VERSION } from './version';

const KV_COUNTER = path.resolve(import.meta.dirname, '../examples/kv-counter');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-cli-bundle-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe('dist/cli/marquee.mjs', () => {
  it('imports nothing but Node built-ins', () => {
    const text = fs.readFileSync(freshBundle(), 'utf8');
    // Static imports (`import{a}from"node:fs"`) and dynamic ones; a quote may not sit in between, so
    // help text that mentions `from '.command()'` is not taken for one.
    const specifiers = [
      ...text.matchAll(/\bimport\s*[^;'"`()]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
    ].map((m) => m[1] ?? m[2]!);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => !s.startsWith('node:'))).toEqual([]);
  });

  it('runs from a folder of its own', () => {
    const copy = path.join(work, 'marquee.mjs');
    fs.copyFileSync(freshBundle(), copy);
    const env = { PATH: process.env.PATH ?? '', HOME: work };
    const version = spawnSync(process.execPath, [copy, '--version'], { cwd: work, env, encoding: 'utf8' });
    expect(version.stdout.trim(), version.stderr).toBe(CLI_VERSION);
    const runtime = path.join(work, 'runtime.js');
    fs.writeFileSync(runtime, '/* bridge */\n');
    const archive = path.join(work, 'app.tar.gz');
    const packed = spawnSync(
      process.execPath,
      [copy, 'app', 'pack', KV_COUNTER, '-o', archive, '--runtime-file', runtime, '--json'],
      { cwd: work, env, encoding: 'utf8' },
    );
    expect(packed.status, packed.stderr).toBe(0);
    expect(JSON.parse(packed.stdout)).toMatchObject({ ok: true, data: { output: archive, file_count: 4 } });
    expect(fs.statSync(archive).size).toBeGreaterThan(0);
  });
});
