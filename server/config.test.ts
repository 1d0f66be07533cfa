import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, SETTINGS, describeConfig, loadConfig } from './config';

describe('configuration', () => {
  it('defaults to port 8080, ./data and origins that follow the port', () => {
    const c = loadConfig({}, []);
    expect(c.port).toBe(8080);
    expect(c.dataDir).toBe('./data');
    expect(c.controlOrigin).toBe('http://localhost:8080');
    expect(c.playOrigin).toBe('http://localhost:8080');
    expect(c.releaseOrigin).toBe('http://{label}.release.localhost:8080');
    expect(c.dashboardOrigin).toBe('http://dashboard.localhost:8080');
    expect(c.model).toBe('P');
  });

  it('reads PORT and MARQUEE_DATA_DIR from the environment, and origins follow PORT', () => {
    const c = loadConfig({ PORT: '9090', MARQUEE_DATA_DIR: '/srv/marquee' }, []);
    expect(c.port).toBe(9090);
    expect(c.dataDir).toBe('/srv/marquee');
    expect(c.controlOrigin).toBe('http://localhost:9090');
  });

  it('lets flags override the environment', () => {
    const c = loadConfig({ PORT: '9090' }, ['--port', '7070', '--control-origin=https://api.example.com/']);
    expect(c.port).toBe(7070);
    expect(c.controlOrigin).toBe('https://api.example.com');
  });

  it('rejects invalid values and unknown flags with the setting named', () => {
    expect(() => loadConfig({ PORT: 'eighty' }, [])).toThrow(/PORT/);
    expect(() => loadConfig({}, ['--nope', '1'])).toThrow(ConfigError);
    expect(() => loadConfig({ MARQUEE_RELEASE_ORIGIN: 'http://release.example.com' }, [])).toThrow(/MARQUEE_RELEASE_ORIGIN/);
  });

  it('never prints secrets, even in validation errors', () => {
    const c = loadConfig({ MARQUEE_SECRET: 'hunter2-very-secret-hunter2-very-secret', MARQUEE_BETA_KEY: 'beta-secret' }, []);
    const text = describeConfig(c).join(' ');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('beta-secret');
    expect(text).toContain('MARQUEE_SECRET=[redacted]');
    expect(() => loadConfig({ MARQUEE_IMAGE_VENDOR_KEY: '' , MARQUEE_SECRET: '' }, [])).not.toThrow();
  });

  it('refuses a configured MARQUEE_SECRET shorter than 32 characters, naming the setting but never the value', () => {
    let error: unknown;
    try {
      loadConfig({ MARQUEE_SECRET: 'guessable-short-secret' }, []);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^MARQUEE_SECRET \(--secret\) = \[redacted\]: must be at least 32 characters/);
    expect((error as Error).message).not.toContain('guessable');
    expect(() => loadConfig({}, ['--secret', 'a'])).toThrow(/MARQUEE_SECRET/);
    expect(loadConfig({ MARQUEE_SECRET: 'x'.repeat(32) }, []).secret).toHaveLength(32);
  });
});

describe('README configuration table', () => {
  it('documents every setting with its env name and flag', () => {
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const setting of Object.values(SETTINGS)) {
      expect(readme, setting.env).toContain(`| \`${setting.env}\` | \`${setting.flag}\` |`);
    }
  });
});
