// Boots the player: configuration, store, offline database and service worker, the controller, and the shell.
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import './app/player.css';
import { readPlayerConfig } from './config/player-config';
import { isFramed } from './framing';
import { startKioskLink } from './kiosk/kiosk-link';
import { PlayerDatabase } from './offline/player-database';
import { registerServiceWorker } from './offline/register-service-worker';
import { kioskHooks } from './runtime/kiosk-hooks';
import { PlayerController } from './runtime/player-controller';
import { composeGlass, observeSurface } from './runtime/glass-capture';

/** A resize is told once it settled (a window dragged to a new size sends dozens of events). */
const RESIZE_SETTLE_MS = 1000;
import { createPlayerStore } from './state/player-store';

if (isFramed(window)) {
  // Inside a frame: show nothing, open no session, never read the URL's fragment or path.
  console.warn('[marquee] the player does not run inside a frame');
} else {
  await boot();
}

async function boot(): Promise<void> {
  const log = (message: string) => console.info(`[marquee] ${message}`);
  const config = readPlayerConfig();
  const store = createPlayerStore();
  const db = await PlayerDatabase.open().catch(() => null);
  void registerServiceWorker(log);
  const controller = new PlayerController({
    config,
    store,
    db,
    location: window.location,
    history: window.history,
    storage: window.localStorage,
    reload: () => window.location.reload(),
    kiosk: kioskHooks(window),
    glass: { capture: (request) => composeGlass(window, request), surface: () => observeSurface(window) },
    log,
  });
  let resized: number | undefined;
  window.addEventListener('resize', () => {
    window.clearTimeout(resized);
    resized = window.setTimeout(() => void controller.observe(), RESIZE_SETTLE_MS);
  });
  (window as unknown as { marqueePlayer: unknown }).marqueePlayer = { store, controller };
  createRoot(document.getElementById('root')!).render(
    <App store={store} controller={controller} pairingHintUrl={config.pairingHintUrl} />,
  );
  void controller.start();
  // Served by a kiosk agent: keep its channel (heartbeats for the watchdog, its commands).
  startKioskLink({
    document,
    location: window.location,
    WebSocket: window.WebSocket,
    requestAnimationFrame: (cb) => window.requestAnimationFrame(cb),
    setInterval: (fn, ms) => window.setInterval(fn, ms),
    setTimeout: (fn, ms) => window.setTimeout(fn, ms),
    reload: () => window.location.reload(),
    clockReferenceChanged: () => controller.clockReferenceChanged(),
    livePage: () =>
      [...document.querySelectorAll<HTMLElement>('.stage .page[data-state="live"]')].at(-1)?.dataset.pageId,
  });
}
