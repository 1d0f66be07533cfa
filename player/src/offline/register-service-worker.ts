// Registers /sw.js with workbox-window. The worker claims the page at once, so media of the first
// manifest already pass through it and are cached.
import { Workbox } from 'workbox-window';

export async function registerServiceWorker(log: (message: string) => void): Promise<void> {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  try {
    const workbox = new Workbox('/sw.js', { scope: '/' });
    await workbox.register();
  } catch (error) {
    log(`the service worker could not be registered: ${String(error)}`);
  }
}
