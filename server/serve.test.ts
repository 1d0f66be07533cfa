import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';
import { startBanner, startFailure } from './serve';

describe('what a failed start prints', () => {
  it('is the message alone for a refused setting', () => {
    const printed = startFailure(new ConfigError('MARQUEE_PROXY_SOCKET: /run/x.sock exists and is not a socket'));
    expect(printed).toBe('marquee: could not start: MARQUEE_PROXY_SOCKET: /run/x.sock exists and is not a socket');
  });

  it('is the message alone for a system error such as a port in use', () => {
    const inUse = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:8080'), {
      code: 'EADDRINUSE',
    });
    expect(startFailure(inUse)).toBe(
      'marquee: could not start: listen EADDRINUSE: address already in use 127.0.0.1:8080',
    );
  });

  it('carries the stack of an unexpected error, so a defect says where it is', () => {
    const defect = new TypeError("Cannot read properties of undefined (reading 'port')");
    const printed = startFailure(defect);
    expect(printed.split('\n')[0]).toBe(
      "marquee: could not start: Cannot read properties of undefined (reading 'port')",
    );
    expect(printed).toContain(defect.stack!);
    expect(printed).toMatch(/\n\s+at .*serve\.test\.ts/);
  });

  it('says what was thrown when it is not an Error', () => {
    expect(startFailure('no store')).toBe('marquee: could not start: no store');
  });
});

describe('what a start prints', () => {
  it('names the play origin for the player when the control plane has an origin of its own', () => {
    const config = loadConfig({
      MARQUEE_CONTROL_ORIGIN: 'https://signage.example.com',
      MARQUEE_PLAY_ORIGIN: 'https://play.signage.example.com',
      MARQUEE_RELEASE_ORIGIN: 'https://{label}.signage-apps.example.net',
      MARQUEE_DASHBOARD_ORIGIN: 'https://dashboard.signage.example.com',
      MARQUEE_SECRET: 'a-secret-that-is-long-enough-0123456789',
    });
    const lines = startBanner(config, 8080).split('\n');
    expect(lines.slice(1, 6)).toEqual([
      '  control plane           https://signage.example.com',
      '  player                  https://play.signage.example.com',
      '  runtime plane           https://play.signage.example.com/runtime/v1',
      '  release hosts           https://{label}.signage-apps.example.net',
      '  dashboard               https://dashboard.signage.example.com',
    ]);
    expect(lines[6]).toContain('MARQUEE_SECRET=[redacted]');
    expect(lines.join('\n')).not.toContain('a-secret-that-is-long-enough');
  });

  it('names one origin for both when they share it, with the port it bound', () => {
    const lines = startBanner(loadConfig({ PORT: '0' }), 41234).split('\n');
    expect(lines[1]).toBe('  control plane + player  http://localhost:41234');
    expect(lines[2]).toBe('  runtime plane           http://localhost:41234/runtime/v1');
  });
});
