import { describe, expect, it, vi } from 'vitest';
import { PAGE_CALL_CHANNEL } from '../kiosk/page-hooks';

const exposed = new Map<string, Record<string, (...args: unknown[]) => void>>();
const sent: unknown[][] = [];
vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (name: string, api: never) => exposed.set(name, api) },
  ipcRenderer: { send: (...args: unknown[]) => sent.push(args) },
}));

describe('the Electron preload', () => {
  it('gives the top frame marqueeKiosk, whose calls go to the main process on one channel', async () => {
    const top = {} as { top?: unknown };
    top.top = top;
    vi.stubGlobal('window', top);
    await import('./preload');
    const hooks = exposed.get('marqueeKiosk')!;
    expect(Object.keys(hooks).sort()).toEqual(['reboot', 'setDisplayPower']);
    hooks.setDisplayPower!(false);
    hooks.setDisplayPower!('on'); // only `true` turns the panel on
    hooks.reboot!();
    expect(sent).toEqual([
      [PAGE_CALL_CHANNEL, { op: 'display_power', on: false }],
      [PAGE_CALL_CHANNEL, { op: 'display_power', on: false }],
      [PAGE_CALL_CHANNEL, { op: 'reboot' }],
    ]);
    vi.unstubAllGlobals();
  });
});
