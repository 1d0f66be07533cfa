// In a kiosk the page is served by the kiosk agent, which says so in the shell
// (`<meta name="marquee-kiosk-channel">`). The player then keeps a channel to the agent: a
// heartbeat every second with the count of frames drawn (the watchdog's evidence that glass is
// alive: it stops when rendering hangs), and the agent's commands (reload; a change of the clock
// reference when its LAN lockstep lead changed). Elsewhere nothing runs.
export const KIOSK_CHANNEL_META = 'marquee-kiosk-channel';
export const HEARTBEAT_MS = 1000;
const RECONNECT_MAX_MS = 10_000;

export interface KioskLinkHost {
  document: Document;
  location: Location;
  WebSocket: typeof WebSocket;
  requestAnimationFrame(callback: () => void): number;
  setInterval(fn: () => void, ms: number): number;
  setTimeout(fn: () => void, ms: number): number;
  reload(): void;
  /** The agent's clock moved onto another reference (its LAN lead changed): the player's estimate starts over. */
  clockReferenceChanged?(): void;
  /** The page on glass, sent along with heartbeats. */
  livePage(): string | undefined;
}

/** The channel URL the agent named, as ws:// on the page's own origin; undefined outside a kiosk. */
export function kioskChannelUrl(document: Document, location: Location): string | undefined {
  const path = document.querySelector<HTMLMetaElement>(`meta[name="${KIOSK_CHANNEL_META}"]`)?.content;
  if (!path?.startsWith('/')) return undefined;
  const url = new URL(path, location.href);
  if (url.origin !== location.origin) return undefined; // the agent's own origin only (`//host` is not)
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

export function startKioskLink(host: KioskLinkHost): boolean {
  const url = kioskChannelUrl(host.document, host.location);
  if (!url) return false;
  let frames = 0;
  const frame = () => {
    frames++;
    host.requestAnimationFrame(frame);
  };
  host.requestAnimationFrame(frame);
  let socket: WebSocket | undefined;
  let failures = 0;
  const connect = () => {
    const ws = new host.WebSocket(url);
    socket = ws;
    ws.onopen = () => (failures = 0);
    ws.onmessage = (event) => {
      let message: { type?: string };
      try {
        message = JSON.parse(String(event.data)) as { type?: string };
      } catch {
        return;
      }
      if (message.type === 'reload') host.reload();
      else if (message.type === 'lockstep.reference_changed') host.clockReferenceChanged?.();
    };
    ws.onclose = () => {
      socket = undefined;
      host.setTimeout(connect, Math.min(RECONNECT_MAX_MS, 500 * 2 ** failures++));
    };
  };
  connect();
  host.setInterval(() => {
    if (socket?.readyState !== 1) return;
    const page = host.livePage();
    socket.send(JSON.stringify({ type: 'heartbeat', frames, ...(page ? { page } : {}) }));
  }, HEARTBEAT_MS);
  return true;
}
