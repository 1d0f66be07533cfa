import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, SETTINGS, asksForHelp, describeConfig, loadConfig, usage } from './config';

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

  it('--help lists every setting with its flag, variable and default, secrets never shown', () => {
    const text = usage();
    for (const s of Object.values(SETTINGS)) expect(text).toContain(`${s.flag} <value>  (${s.env}; default `);
    expect(text).toContain('--port <value>  (PORT; default 8080)');
    // Defaults follow the settings before them, as at a start.
    expect(text).toContain('(MARQUEE_DASHBOARD_ORIGIN; default http://dashboard.localhost:8080)');
    expect(text).toContain('(MARQUEE_TRUSTED_PROXIES; default unset)');
    expect(text).toContain('(MARQUEE_SECRET; default unset)');
    expect(asksForHelp(['--port', '9', '-h'])).toBe(true);
    expect(asksForHelp(['--port', '9'])).toBe(false);
  });

  it('rejects invalid values and unknown flags with the setting named', () => {
    expect(() => loadConfig({ PORT: 'eighty' }, [])).toThrow(/PORT/);
    expect(() => loadConfig({}, ['--nope', '1'])).toThrow(ConfigError);
    expect(() => loadConfig({ MARQUEE_RELEASE_ORIGIN: 'http://release.example.com' }, [])).toThrow(
      /MARQUEE_RELEASE_ORIGIN/,
    );
  });

  it('never prints secrets, even in validation errors', () => {
    const c = loadConfig(
      { MARQUEE_SECRET: 'hunter2-very-secret-hunter2-very-secret', MARQUEE_BETA_KEY: 'beta-secret' },
      [],
    );
    const text = describeConfig(c).join(' ');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('beta-secret');
    expect(text).toContain('MARQUEE_SECRET=[redacted]');
    expect(() => loadConfig({ MARQUEE_IMAGE_VENDOR_KEY: '', MARQUEE_SECRET: '' }, [])).not.toThrow();
  });

  it('stores in SQLite in the data dir unless MARQUEE_DATABASE_URL names another database', () => {
    expect(loadConfig({ MARQUEE_DATA_DIR: '/var/lib/marquee' }, []).databaseUrl).toBe(
      'sqlite:/var/lib/marquee/marquee.db',
    );
    expect(loadConfig({}, ['--database-url', 'postgres://db.example/marquee']).databaseUrl).toBe(
      'postgres://db.example/marquee',
    );
    expect(() => loadConfig({ MARQUEE_DATABASE_URL: '/var/lib/marquee.db' }, [])).toThrow(/MARQUEE_DATABASE_URL/);
  });

  it('prints a database URL without its password, even in validation errors', () => {
    const c = loadConfig({ MARQUEE_DATABASE_URL: 'postgres://marquee:hunter2@db.example:5432/marquee' }, []);
    const text = describeConfig(c).join(' ');
    expect(text).toContain('MARQUEE_DATABASE_URL=postgres://marquee:[redacted]@db.example:5432/marquee');
    expect(text).not.toContain('hunter2');
    let error: unknown;
    try {
      loadConfig({ MARQUEE_DATABASE_URL: 'mysql://marquee:hunter2@db.example/marquee' }, []);
    } catch (e) {
      error = e;
    }
    expect((error as Error).message).toMatch(
      /^MARQUEE_DATABASE_URL \(--database-url\) = "mysql:\/\/marquee:\[redacted\]@db/,
    );
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('prints MARQUEE_SMTP_URL without its password, and refuses what is not an smtp(s) URL', () => {
    const c = loadConfig({ MARQUEE_SMTP_URL: 'smtps://mailer:hunter2@smtp.example:465' }, []);
    expect(describeConfig(c).join(' ')).toContain('MARQUEE_SMTP_URL=smtps://mailer:[redacted]@smtp.example:465');
    expect(describeConfig(c).join(' ')).not.toContain('hunter2');
    expect(() => loadConfig({ MARQUEE_SMTP_URL: 'http://mailer:hunter2@smtp.example' }, [])).toThrow(
      /MARQUEE_SMTP_URL/,
    );
    expect(loadConfig({}, []).smtpUrl).toBeUndefined();
  });

  it('refuses a configured MARQUEE_SECRET shorter than 32 characters, naming the setting but never the value', () => {
    let error: unknown;
    try {
      loadConfig({ MARQUEE_SECRET: 'guessable-short-secret' }, []);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /^MARQUEE_SECRET \(--secret\) = \[redacted\]: must be at least 32 characters/,
    );
    expect((error as Error).message).not.toContain('guessable');
    expect(() => loadConfig({}, ['--secret', 'a'])).toThrow(/MARQUEE_SECRET/);
    expect(loadConfig({ MARQUEE_SECRET: 'x'.repeat(32) }, []).secret).toHaveLength(32);
  });
});

describe('release hosts on another site than the player', () => {
  const refusal = (env: NodeJS.ProcessEnv, argv: string[] = []) => {
    try {
      loadConfig(env, argv);
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
  };

  it('holds for the defaults, with no configuration, at any port', () => {
    expect(refusal({})).toBeUndefined();
    expect(refusal({ PORT: '9191' })).toBeUndefined();
  });

  it("refuses to start with a release host under the play origin's registrable domain, naming both origins", () => {
    const message = refusal({
      MARQUEE_PLAY_ORIGIN: 'https://play.example.com',
      MARQUEE_RELEASE_ORIGIN: 'https://{label}.release.play.example.com',
    });
    expect(message).toContain('MARQUEE_RELEASE_ORIGIN (--release-origin) = "https://{label}.release.play.example.com"');
    expect(message).toContain('MARQUEE_PLAY_ORIGIN (--play-origin) = "https://play.example.com"');
    expect(message).toContain('MARQUEE_ALLOW_SAME_SITE_RELEASES=1');
    for (const [play, release] of [
      ['https://play.example.com', 'https://{label}.apps.example.com'], // siblings under example.com
      ['https://example.com', 'https://{label}.example.com'],
      ['https://signage.example.co.uk', 'https://{label}.r.example.co.uk'], // a multi-label public suffix
      ['https://foo.github.io', 'https://{label}.foo.github.io'], // private PSL section: foo.github.io is the site
      ['http://play.test', 'http://{label}.release.play.test'], // an unlisted top label is a suffix, as in Chromium
      ['https://PLAY.Example.com', 'https://{label}.release.example.com:8443'], // case and port do not matter
    ]) {
      expect(refusal({ MARQUEE_PLAY_ORIGIN: play, MARQUEE_RELEASE_ORIGIN: release }), `${play} / ${release}`).toMatch(
        /is the same site as/,
      );
    }
  });

  it('accepts release hosts on another registrable domain, or another PSL entry', () => {
    for (const [play, release] of [
      ['https://play.example.com', 'https://{label}.example-apps.net'],
      ['https://play.example.com', 'https://{label}.release.example.net'],
      ['https://foo.github.io', 'https://{label}.bar.github.io'], // distinct private-suffix registrations
      ['http://play.test', 'http://{label}.marquee-apps.test'], // the shape of the player's hang test
      ['http://localhost:8080', 'http://{label}.release.localhost:8080'], // the default: release.localhost is not localhost
      ['http://127.0.0.1:8080', 'http://{label}.release.localhost:8080'],
    ]) {
      expect(
        refusal({ MARQUEE_PLAY_ORIGIN: play, MARQUEE_RELEASE_ORIGIN: release }),
        `${play} / ${release}`,
      ).toBeUndefined();
    }
  });

  it('starts anyway when MARQUEE_ALLOW_SAME_SITE_RELEASES or its flag says so, and only then', () => {
    const sameSite = {
      MARQUEE_PLAY_ORIGIN: 'https://play.example.com',
      MARQUEE_RELEASE_ORIGIN: 'https://{label}.release.play.example.com',
    };
    expect(loadConfig({ ...sameSite, MARQUEE_ALLOW_SAME_SITE_RELEASES: '1' }).allowSameSiteReleases).toBe(true);
    expect(loadConfig(sameSite, ['--allow-same-site-releases', 'true']).allowSameSiteReleases).toBe(true);
    expect(refusal({ ...sameSite, MARQUEE_ALLOW_SAME_SITE_RELEASES: '0' })).toMatch(/same site/);
    expect(refusal({ ...sameSite, MARQUEE_ALLOW_SAME_SITE_RELEASES: 'yes' })).toMatch(
      /^MARQUEE_ALLOW_SAME_SITE_RELEASES/,
    );
    expect(loadConfig({}).allowSameSiteReleases).toBe(false);
  });
});

describe('every plane reachable by its host', () => {
  const refusal = (env: NodeJS.ProcessEnv) => {
    try {
      loadConfig(env, []);
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
  };
  const production = {
    MARQUEE_CONTROL_ORIGIN: 'https://signage.example.com',
    MARQUEE_PLAY_ORIGIN: 'https://play.signage.example.com',
    MARQUEE_RELEASE_ORIGIN: 'https://{label}.signage-apps.example.net',
    MARQUEE_DASHBOARD_ORIGIN: 'https://dashboard.signage.example.com',
  };

  it('starts with a dashboard host of its own, control and play sharing one, or the defaults', () => {
    expect(refusal(production)).toBeUndefined();
    expect(refusal({ ...production, MARQUEE_PLAY_ORIGIN: production.MARQUEE_CONTROL_ORIGIN })).toBeUndefined();
    expect(refusal({})).toBeUndefined();
  });

  it('refuses a dashboard origin on the control or play host, which would then serve the dashboard alone', () => {
    const onControl = refusal({ ...production, MARQUEE_DASHBOARD_ORIGIN: 'https://SIGNAGE.example.com/' });
    expect(onControl).toContain('MARQUEE_DASHBOARD_ORIGIN (--dashboard-origin) = "https://SIGNAGE.example.com"');
    expect(onControl).toContain('has the host of MARQUEE_CONTROL_ORIGIN (--control-origin)');
    expect(onControl).toContain('https://dashboard.signage.example.com');
    expect(refusal({ ...production, MARQUEE_DASHBOARD_ORIGIN: 'https://play.signage.example.com' })).toMatch(
      /has the host of MARQUEE_PLAY_ORIGIN .*runtime plane/,
    );
    // Another port is another host.
    expect(refusal({ ...production, MARQUEE_DASHBOARD_ORIGIN: 'https://signage.example.com:8443' })).toBeUndefined();
  });

  it('refuses an origin whose host is a release host, which would serve one release and nothing else', () => {
    expect(refusal({ ...production, MARQUEE_DASHBOARD_ORIGIN: 'https://dashboard.signage-apps.example.net' })).toMatch(
      /^MARQUEE_DASHBOARD_ORIGIN .* is a release host of MARQUEE_RELEASE_ORIGIN/,
    );
    expect(refusal({ ...production, MARQUEE_CONTROL_ORIGIN: 'https://api.signage-apps.example.net' })).toMatch(
      /^MARQUEE_CONTROL_ORIGIN .* is a release host/,
    );
    // Deeper under the release domain is no release host (a label has no dot).
    expect(
      refusal({ ...production, MARQUEE_DASHBOARD_ORIGIN: 'https://dashboard.admin.signage-apps.example.net' }),
    ).toBeUndefined();
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
