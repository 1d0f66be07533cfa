// Discovery of a sync group's members on the LAN (opt-in, `--lan-discover`): every member that
// listens announces its LAN port by UDP multicast every few seconds, and dials the members it
// hears. An announcement carries an HMAC under the group's key, so a stranger cannot make a kiosk
// dial anywhere; the address dialled is the one the datagram came from (a member need not know
// its own LAN address). Replaying a member's announcement only points at that member, whose ws
// link authenticates on its own (lan-carrier.ts).
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import type { LanSecret } from './lan-carrier';

/** An administratively scoped group (RFC 2365): it stays on the site's network. */
export const DISCOVERY_GROUP = '239.255.77.77';
export const DISCOVERY_PORT = 8092;
/** Announced this often: a member that comes back is found within a few seconds. */
export const ANNOUNCE_EVERY_MS = 2000;
/** Announcements are tiny; anything longer is not one. */
const MAX_DATAGRAM_BYTES = 512;
const PROTOCOL = 'marquee-lan-discovery/1';

export interface DiscoverySettings {
  /** Multicast group and port (defaults above). */
  group?: string;
  port?: number;
  /** The local interface address to join on and send from (the system's default when absent). */
  interface?: string;
}

export interface DiscoveryHost {
  /** The group's key and name, or null while unknown (nothing is sent or believed then). */
  secret(): LanSecret | null;
  /** The LAN listener's port, or undefined when this member does not listen. */
  listenPort(): number | undefined;
  /** A member was heard at this address. */
  found(url: string): void;
}

function announcementMac(secret: LanSecret, port: number): string {
  return crypto
    .createHmac('sha256', secret.key)
    .update(`${PROTOCOL}\u0000${secret.group}\u0000${port}`)
    .digest('base64url');
}

export class LanDiscovery {
  private socket: dgram.Socket | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly group: string;
  private readonly port: number;

  constructor(
    private readonly settings: DiscoverySettings,
    private readonly host: DiscoveryHost,
  ) {
    this.group = settings.group ?? DISCOVERY_GROUP;
    this.port = settings.port ?? DISCOVERY_PORT;
  }

  async start(): Promise<void> {
    const socket = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    this.socket = socket;
    socket.on('message', (message, from) => this.receive(message, from.address));
    socket.on('error', () => undefined); // a LAN without multicast: the configured peers still work
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.port, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    socket.addMembership(this.group, this.settings.interface);
    if (this.settings.interface) socket.setMulticastInterface(this.settings.interface);
    socket.setMulticastLoopback(true); // members on one host (tests, a box driving two screens)
    this.timer = setInterval(() => this.announce(), ANNOUNCE_EVERY_MS);
    this.timer.unref();
    this.announce();
  }

  stop(): void {
    clearInterval(this.timer);
    try {
      this.socket?.close();
    } catch {
      // already closed
    }
  }

  private announce(): void {
    const secret = this.host.secret();
    const port = this.host.listenPort();
    if (!secret || port === undefined || !this.socket) return;
    const text = JSON.stringify({ v: 1, port, mac: announcementMac(secret, port) });
    this.socket.send(text, this.port, this.group, () => undefined);
  }

  private receive(message: Buffer, address: string): void {
    const secret = this.host.secret();
    if (!secret || message.length > MAX_DATAGRAM_BYTES) return;
    let parsed: { v?: unknown; port?: unknown; mac?: unknown };
    try {
      parsed = JSON.parse(message.toString('utf8')) as typeof parsed;
    } catch {
      return;
    }
    const port = parsed.port;
    if (parsed.v !== 1 || typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) return;
    if (typeof parsed.mac !== 'string') return;
    const expected = announcementMac(secret, port);
    if (
      parsed.mac.length !== expected.length ||
      !crypto.timingSafeEqual(Buffer.from(parsed.mac), Buffer.from(expected))
    )
      return;
    this.host.found(`ws://${address}:${port}`);
  }
}
