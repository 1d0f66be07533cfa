import { describe, expect, it } from 'vitest';
import { kioskWindowOptions, mayNavigate } from './window';

describe('the Electron kiosk window', () => {
  it('is a fullscreen kiosk whose renderer has no Node, a sandbox and context isolation', () => {
    const options = kioskWindowOptions(true);
    expect(options).toMatchObject({ kiosk: true, fullscreen: true, frame: false, show: false });
    expect(options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      devTools: false,
      autoplayPolicy: 'no-user-gesture-required',
    });
    expect(options.webPreferences).not.toHaveProperty('preload');
  });

  it('allows devtools only in development', () => {
    expect(kioskWindowOptions(false).webPreferences?.devTools).toBe(true);
  });

  it("shows the agent's origin only", () => {
    expect(mayNavigate('http://127.0.0.1:8090/s/abc', 'http://127.0.0.1:8090')).toBe(true);
    expect(mayNavigate('http://127.0.0.1:8091/', 'http://127.0.0.1:8090')).toBe(false);
    expect(mayNavigate('https://evil.example/', 'http://127.0.0.1:8090')).toBe(false);
    expect(mayNavigate('not a url', 'http://127.0.0.1:8090')).toBe(false);
  });
});
