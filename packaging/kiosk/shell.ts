// What every shell (Chromium launcher, Electron, none) wires between the agent and its renderer:
// heartbeats from the renderer channel feed the watchdog, its recoveries are counted and reported
// upstream by the agent, and blank glass counts only while the active manifest has pages and the
// display is on.
import type { KioskAgent } from './agent';
import { Watchdog, type RendererControl } from './watchdog';

/** Reloads through the renderer channel: for a browser the agent did not start (no kill, no capture). */
export function channelControl(agent: KioskAgent): RendererControl {
  return {
    reload: async () => agent.channel?.send({ type: 'reload', reason: 'watchdog' }),
    restart: async () => agent.channel?.send({ type: 'reload', reason: 'watchdog' }),
    present: () => (agent.channel?.connected ?? 0) > 0,
  };
}

export function watchRenderer(
  agent: KioskAgent,
  control: RendererControl,
  options: { armOnFirstHeartbeat?: boolean } = {},
): Watchdog {
  const watchdog = new Watchdog({
    control,
    onRecovery: (reason, action) => {
      agent.log('warn', `watchdog: ${action} after ${reason}`);
      agent.recordRecovery(reason);
    },
    contentExpected: () => agent.contentExpected(),
  });
  let armed = !options.armOnFirstHeartbeat;
  if (armed) watchdog.start();
  agent.channel?.onHeartbeat((beat) => {
    watchdog.heartbeat(beat.frames);
    if (!armed) {
      armed = true;
      watchdog.start();
    }
  });
  return watchdog;
}
