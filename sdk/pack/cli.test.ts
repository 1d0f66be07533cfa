import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const cli = path.resolve(import.meta.dirname, 'cli.ts');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-pack-cli-'));

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

async function pack(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', cli, ...args], {
      cwd: path.resolve(import.meta.dirname, '../..'),
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('pack CLI', () => {
  it('writes the archive, prints the upload headers as JSON, and round-trips through system tar', async () => {
    const site = path.join(work, 'site');
    fs.mkdirSync(path.join(site, 'js'), { recursive: true });
    fs.writeFileSync(path.join(site, 'index.html'), '<html><head></head><body>hi</body></html>');
    fs.writeFileSync(path.join(site, 'js/app.js'), 'console.log(1)');
    const runtime = path.join(work, 'runtime.js');
    fs.writeFileSync(runtime, 'window.marquee = {};');
    const out = path.join(work, 'app.tar.gz');
    const result = await pack([site, '-o', out, '--runtime-file', runtime, '--name', 'Demo', '--json']);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    const archive = fs.readFileSync(out);
    expect(json).toMatchObject({
      output: out,
      bytes: archive.length,
      file_count: 3,
      headers: { 'Marquee-File-Count': '3', 'Marquee-Application-Name': 'Demo', 'Marquee-SDK-Version': '1' },
    });
    const extracted = path.join(work, 'extracted');
    fs.mkdirSync(extracted);
    await run('tar', ['-xzf', out, '-C', extracted]);
    expect(fs.readFileSync(path.join(extracted, 'js/app.js'), 'utf8')).toBe('console.log(1)');
    expect(fs.readFileSync(path.join(extracted, '_marquee/runtime.js'), 'utf8')).toBe('window.marquee = {};');
    expect(fs.readFileSync(path.join(extracted, 'index.html'), 'utf8')).toContain('data-marquee-sdk="1"');
  });

  it('explains every problem and exits 1 when the directory cannot be packed', async () => {
    const bad = path.join(work, 'bad');
    fs.mkdirSync(bad);
    fs.writeFileSync(path.join(bad, 'Page.html'), 'x');
    fs.writeFileSync(path.join(bad, 'page.html'), 'y');
    const result = await pack([bad, '-o', path.join(work, 'bad.tar.gz')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('index_missing');
    expect(result.stderr).toContain('duplicate_path: page.html');
    expect(fs.existsSync(path.join(work, 'bad.tar.gz'))).toBe(false);
  });

  it('prints usage and exits 2 without a directory or output', async () => {
    const result = await pack([]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage:');
  });
});
