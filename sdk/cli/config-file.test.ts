import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigFile, configPathFrom, normalizeApiUrl } from './config-file';
import { CliFailure } from './exit-codes';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-config-'));
  made.push(dir);
  return dir;
}

describe('where the config file is', () => {
  it('takes --config, then MARQUEE_CONFIG, then $XDG_CONFIG_HOME, then ~/.config', () => {
    expect(configPathFrom('/a/c.json', { MARQUEE_CONFIG: '/b/c.json' })).toBe('/a/c.json');
    expect(configPathFrom(undefined, { MARQUEE_CONFIG: '/b/c.json', XDG_CONFIG_HOME: '/x' })).toBe('/b/c.json');
    expect(configPathFrom(undefined, { XDG_CONFIG_HOME: '/x' })).toBe('/x/marquee/config.json');
    expect(configPathFrom(undefined, { XDG_CONFIG_HOME: 'relative' })).toBe(
      path.join(os.homedir(), '.config', 'marquee', 'config.json'),
    );
  });
});

describe('the API URL as a credential key', () => {
  it('normalizes, and refuses what could leak a token or is not http', () => {
    expect(normalizeApiUrl('http://localhost:8080/')).toBe('http://localhost:8080');
    expect(normalizeApiUrl('HTTPS://API.example.com/marquee/')).toBe('https://api.example.com/marquee');
    for (const bad of ['ftp://x', 'http://user:pw@x', 'http://x/?q=1', 'http://x/#f', 'not a url'])
      expect(() => normalizeApiUrl(bad)).toThrow(CliFailure);
  });
});

describe('the file', () => {
  it('is created owner-only in an owner-only directory and replaced whole', async () => {
    const file = path.join(tempDir(), 'nested', 'marquee', 'config.json');
    const config = new ConfigFile(file);
    expect(await config.read()).toEqual({ version: 1, servers: {} });
    await config.update((c) => (c.servers['http://x'] = { token: 'mq_proj_secret' }));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect((await config.read()).servers['http://x']?.token).toBe('mq_proj_secret');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['config.json']);
  });

  it('tightens a file made by hand and reports a loose one', async () => {
    const file = path.join(tempDir(), 'config.json');
    fs.writeFileSync(file, JSON.stringify({ version: 1, servers: {} }), { mode: 0o644 });
    const config = new ConfigFile(file);
    expect(await config.permissionProblem()).toMatch(/readable by other users.*chmod 600/);
    await config.update(() => undefined);
    expect(await config.permissionProblem()).toBeUndefined();
  });

  it('refuses a document it did not write, naming where', async () => {
    const file = path.join(tempDir(), 'config.json');
    fs.writeFileSync(file, JSON.stringify({ version: 1, servers: { 'http://x': { token: 5 } } }));
    await expect(new ConfigFile(file).read()).rejects.toMatchObject({ code: 'config_invalid', exitCode: 12 });
    await expect(new ConfigFile(file).read()).rejects.toThrow(/servers\.http:\/\/x\.token/);
  });
});
