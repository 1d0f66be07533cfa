// The agent's channel to its renderer (ws on the loopback origin, `/kiosk/v1/channel`): runtime
// events and commands go down, heartbeats come up (the watchdog's evidence of frames on glass).
// Message types under `lockstep.` are kept for the lockstep channel (issue 15) and routed to a
// handler installed by that feature; nothing else on the channel reads them.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

export const CHANNEL_PATH = '/kiosk/v1/channel';
/** Longest message a renderer may send (heartbeats and lockstep beats are tiny). */
const MAX_MESSAGE_BYTES = 16 * 1024;

export interface Heartbeat {
  /** Animation frames the renderer has drawn since it loaded (it stops moving when rendering hangs). */
  frames: number;
  /** The page on glass, when there is one. */
  page?: string;
}

export type ChannelMessage =
  | { type: 'runtime.event'; event: { type: string; data: unknown } }
  | { type: 'reload'; reason: string }
  | { type: `lockstep.${string}`; [key: string]: unknown };

export class RendererChannel {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly sockets = new Set<WebSocket>();
  private readonly heartbeatListeners = new Set<(beat: Heartbeat, at: number) => void>();
  /** Installed by the lockstep feature: gets `lockstep.*` messages of a renderer. */
  lockstep: ((message: Record<string, unknown>, reply: (m: ChannelMessage) => void) => void) | undefined;

  get connected(): number {
    return this.sockets.size;
  }

  /** Takes an upgrade the sync server checked (path, Host, Origin). */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('error', () => ws.terminate());
      ws.on('message', (data) => this.receive(ws, String(data)));
    });
  }

  private receive(ws: WebSocket, text: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (message.type === 'heartbeat' && typeof message.frames === 'number') {
      const beat: Heartbeat = {
        frames: message.frames,
        ...(typeof message.page === 'string' ? { page: message.page } : {}),
      };
      for (const listener of this.heartbeatListeners) listener(beat, Date.now());
    } else if (typeof message.type === 'string' && message.type.startsWith('lockstep.')) {
      this.lockstep?.(message, (reply) => ws.send(JSON.stringify(reply)));
    }
  }

  onHeartbeat(listener: (beat: Heartbeat, at: number) => void): () => void {
    this.heartbeatListeners.add(listener);
    return () => this.heartbeatListeners.delete(listener);
  }

  send(message: ChannelMessage): void {
    const text = JSON.stringify(message);
    for (const ws of this.sockets) if (ws.readyState === ws.OPEN) ws.send(text);
  }

  close(): void {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }
}
