import { describe, expect, it } from 'vitest';
import { ConfigError } from './config';
import { startFailure } from './serve';

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
