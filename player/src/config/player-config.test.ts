import { describe, expect, it } from 'vitest';
import { resolvePlayerConfig } from './player-config';

describe('player configuration', () => {
  it('defaults the runtime origin to the page origin', () => {
    expect(resolvePlayerConfig({ pageOrigin: 'http://localhost:8080' })).toEqual({
      runtimeOrigin: 'http://localhost:8080',
      contentOrigin: 'http://localhost:8080',
    });
  });

  it('takes the global before the meta tag, normalized to an origin', () => {
    const config = resolvePlayerConfig({
      pageOrigin: 'http://127.0.0.1:9000',
      global: { runtimeOrigin: 'https://play.example.com/ignored/path' },
      meta: 'https://meta.example.com',
    });
    expect(config.runtimeOrigin).toBe('https://play.example.com');
  });

  it('uses the meta tag when there is no global', () => {
    expect(resolvePlayerConfig({ pageOrigin: 'file://', meta: 'https://play.example.com:8443' }).runtimeOrigin).toBe(
      'https://play.example.com:8443',
    );
  });

  it('takes a pairing hint URL with a {code} placeholder from the global', () => {
    expect(
      resolvePlayerConfig({
        pageOrigin: 'http://localhost:8080',
        global: { pairingHintUrl: 'https://dash.example.com/pair?code={code}' },
      }).pairingHintUrl,
    ).toBe('https://dash.example.com/pair?code={code}');
    expect(
      resolvePlayerConfig({
        pageOrigin: 'http://localhost:8080',
        global: { pairingHintUrl: 'https://dash.example.com/pair' },
      }).pairingHintUrl,
    ).toBeUndefined();
  });

  it("takes the pairing hint from the server's meta tag, the global beating it", () => {
    const hintMeta = 'http://dashboard.localhost:8080/screens?pair={code}';
    expect(resolvePlayerConfig({ pageOrigin: 'http://localhost:8080', hintMeta }).pairingHintUrl).toBe(hintMeta);
    expect(
      resolvePlayerConfig({
        pageOrigin: 'http://localhost:8080',
        global: { pairingHintUrl: 'https://dash.example.com/pair?code={code}' },
        hintMeta,
      }).pairingHintUrl,
    ).toBe('https://dash.example.com/pair?code={code}');
    expect(
      resolvePlayerConfig({ pageOrigin: 'http://localhost:8080', hintMeta: 'javascript:x({code})' }).pairingHintUrl,
    ).toBeUndefined();
  });

  it('ignores malformed or non-http values', () => {
    expect(
      resolvePlayerConfig({
        pageOrigin: 'http://localhost:8080',
        global: { runtimeOrigin: 'javascript:alert(1)' },
        meta: 'not a url',
      }).runtimeOrigin,
    ).toBe('http://localhost:8080');
  });
});
