// The Electron shell's preload (sandboxed: it reaches Electron's bridge and IPC, nothing else):
// `globalThis.marqueeKiosk` for the agent's page, each call sent to the main process, which checks
// the sender and hands it to the agent (packaging/kiosk/page-hooks.ts). Frames get nothing.
import { contextBridge, ipcRenderer } from 'electron';
import { PAGE_CALL_CHANNEL } from '../kiosk/page-hooks';

if (window.top === window) {
  contextBridge.exposeInMainWorld('marqueeKiosk', {
    setDisplayPower: (on: unknown) => ipcRenderer.send(PAGE_CALL_CHANNEL, { op: 'display_power', on: on === true }),
    reboot: () => ipcRenderer.send(PAGE_CALL_CHANNEL, { op: 'reboot' }),
  });
}
