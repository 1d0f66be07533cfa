import { describe, expect, it } from 'vitest';
import { acceptedPageCall, kioskWindowOptions, mayNavigate } from './window';

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
    expect(kioskWindowOptions(true, '/opt/marquee/dist/electron/preload.cjs').webPreferences).toMatchObject({
      preload: '/opt/marquee/dist/electron/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    });
  });

  it("hands the agent a page call only from the main frame on the agent's origin, well-formed", () => {
    const agent = 'http://127.0.0.1:8090';
    const main = { url: 'http://127.0.0.1:8090/', isMainFrame: true };
    expect(acceptedPageCall(main, agent, { op: 'display_power', on: false })).toEqual({
      op: 'display_power',
      on: false,
    });
    expect(acceptedPageCall(main, agent, { op: 'reboot' })).toEqual({ op: 'reboot' });
    expect(acceptedPageCall({ ...main, isMainFrame: false }, agent, { op: 'reboot' })).toBeUndefined();
    expect(
      acceptedPageCall({ url: 'http://a.release.localhost:8090/', isMainFrame: true }, agent, { op: 'reboot' }),
    ).toBeUndefined();
    expect(acceptedPageCall(main, agent, { op: 'display_power', on: 'off' })).toBeUndefined();
    expect(acceptedPageCall(main, agent, { op: 'format_disk' })).toBeUndefined();
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
