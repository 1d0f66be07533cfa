// The LAN carrier of a sync group's lockstep channel (sdk/lockstep/group-member.ts): ws links
// between the kiosk agents of one group, so a wall keeps its lead, its clock and its barriers with
// the internet down. Opt-in and apart from the renderer's loopback listener: the agent listens on
// the LAN only where told (`--lan-listen`), dials the peers it was given (`--lan-peers`) or heard
// announce themselves (`--lan-discover`, lan-discovery.ts), and learns the others from them (each
// member tells the addresses it knows), so one configured peer is enough to find a whole wall.
//
// Every frame is authenticated with the group's key (HMAC-SHA-256; the key is derived by the server
// per project and group and handed to kiosk sessions only) and bound to its link: each side opens
// with a random nonce, and the other side's frames on that link carry a MAC over that nonce and a
// sequence number that only grows, so a frame recorded on one link is refused on any other and
// replayed on its own. A frame that fails is dropped unread. What a frame may carry is only what
// the group protocol says (heartbeats, clock stamps, "page P at instant T" of the member's own
// timeline): nothing on the LAN can put on glass anything the screen was not assigned.
import crypto from 'node:crypto';
import http from 'node:http';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { GroupMessage, GroupTransport } from '../../sdk/lockstep/group-protocol';
import { LanDiscovery, type DiscoverySettings } from './lan-discovery';

export const LAN_PATH = '/marquee/lockstep/v1';
/** Group messages are a few hundred bytes; a frame past this is not one. */
export const MAX_FRAME_BYTES = 8 * 1024;
/** Addresses learnt from the group are bounded (a wall is tens of screens, not thousands). */
export const MAX_PEERS = 64;
/** Addresses told in a heartbeat, at most. */
const PEERS_TOLD = 16;
/** A peer that cannot be reached is dialled again with backoff up to this: a rebooted kiosk is back in seconds. */
export const REDIAL_MAX_MS = 5000;
const REDIAL_INITIAL_MS = 250;
/** A link whose other side says nothing (not even its nonce) this long is closed. */
const HELLO_TIMEOUT_MS = 5000;
/**
 * Inbound links that have not yet shown a frame of the group's key, at most, and for how long: a
 * member proves itself with its first heartbeat (every second), and anything else is a stranger
 * holding the agent's sockets (its file descriptors are the renderer's and the mirror's too).
 */
export const MAX_UNPROVEN_LINKS = 16;
export const PROVE_TIMEOUT_MS = 10_000;
const NONCE_BYTES = 16;
const PROTOCOL = 'marquee-lan/1';

export interface LanSecret {
  group: string;
  /** The group's key (32 bytes). */
  key: Buffer;
}

export interface LanCarrierOptions {
  /** Where to listen on the LAN (opt-in); without it the carrier only dials. */
  listen?: { host: string; port: number };
  /** ws:// URLs of other members' LAN listeners. */
  peers: string[];
  /** The URL other members reach this one at, told to them (defaults to the listen address when it names a host). */
  advertise?: string;
  /** Find members by UDP multicast too (opt-in; needs a listener). */
  discovery?: DiscoverySettings;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Tests: PROVE_TIMEOUT_MS. */
  proveTimeoutMs?: number;
}

interface Payload {
  /** The sender's member id (a screen id). */
  from: string;
  url?: string;
  peers?: string[];
  body: unknown;
}

/** One ws link to another member, inbound or outbound. */
class Link {
  readonly nonce = crypto.randomBytes(NONCE_BYTES).toString('base64url');
  peerNonce: string | undefined;
  /** The member on the other side, once a frame of it verified. */
  peer: string | undefined;
  private sent = 0;
  private received = 0;
  private readonly helloTimer: ReturnType<typeof setTimeout>;

  constructor(
    readonly ws: WebSocket,
    private readonly carrier: LanCarrier,
    /** Dialled in by someone else: it must prove itself within `proveTimeoutMs`. */
    readonly inbound: boolean,
    proveTimeoutMs: number,
  ) {
    this.helloTimer = setTimeout(() => this.peerNonce === undefined && ws.terminate(), HELLO_TIMEOUT_MS);
    this.helloTimer.unref();
    if (inbound) {
      const proveTimer = setTimeout(() => this.peer === undefined && ws.terminate(), proveTimeoutMs);
      proveTimer.unref();
      ws.on('close', () => clearTimeout(proveTimer));
    }
    ws.on('message', (data, binary) => !binary && this.receive(data));
    ws.on('close', () => {
      clearTimeout(this.helloTimer);
      carrier.dropped(this);
    });
    ws.on('error', () => ws.terminate());
    const hello = () => ws.send(JSON.stringify({ t: 'hello', n: this.nonce }));
    if (ws.readyState === WebSocket.OPEN) hello();
    else ws.once('open', hello);
  }

  get ready(): boolean {
    return this.ws.readyState === WebSocket.OPEN && this.peerNonce !== undefined;
  }

  send(secret: LanSecret, payload: string): void {
    if (!this.ready) return;
    const seq = ++this.sent;
    const mac = frameMac(secret, this.peerNonce!, seq, payload);
    this.ws.send(JSON.stringify({ t: 'f', s: seq, p: payload, m: mac }));
  }

  private receive(data: RawData): void {
    let frame: { t?: unknown; n?: unknown; s?: unknown; p?: unknown; m?: unknown };
    try {
      frame = JSON.parse(String(data)) as typeof frame;
    } catch {
      return;
    }
    if (frame.t === 'hello') {
      if (this.peerNonce === undefined && typeof frame.n === 'string' && /^[A-Za-z0-9_-]{22}$/.test(frame.n))
        this.peerNonce = frame.n;
      return;
    }
    if (frame.t !== 'f' || typeof frame.s !== 'number' || typeof frame.p !== 'string' || typeof frame.m !== 'string')
      return;
    const secret = this.carrier.secret;
    if (!secret || !Number.isSafeInteger(frame.s) || frame.s <= this.received) return;
    if (!macMatches(frameMac(secret, this.nonce, frame.s, frame.p), frame.m)) return;
    this.received = frame.s;
    let payload: Payload;
    try {
      payload = JSON.parse(frame.p) as Payload;
    } catch {
      return;
    }
    if (typeof payload.from !== 'string' || payload.from.length > 128) return;
    this.peer = payload.from;
    this.carrier.deliver(this, payload);
  }
}

function frameMac(secret: LanSecret, nonce: string, seq: number, payload: string): string {
  return crypto
    .createHmac('sha256', secret.key)
    .update(`${PROTOCOL}\u0000${secret.group}\u0000${nonce}\u0000${seq}\u0000${payload}`)
    .digest('base64url');
}

function macMatches(expected: string, given: string): boolean {
  return given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** A ws:// URL a member may be dialled at, or undefined. */
export function lanPeerUrl(text: string): string | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== 'ws:' || url.username || url.password || url.search || url.hash) return undefined;
    if (url.pathname === '/' || url.pathname === '') url.pathname = LAN_PATH;
    return url.pathname === LAN_PATH ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** A member's LAN transport: what it sends reaches every member it is linked with. */
export class LanCarrier implements GroupTransport {
  /** The group's key: frames are neither sent nor read without it. */
  secret: LanSecret | null = null;
  /** This member's id (frames name their sender). */
  self: string | undefined;
  private readonly links = new Set<Link>();
  private readonly handlers = new Set<(raw: unknown) => void>();
  private readonly peers = new Map<
    string,
    { link: Link | null; failures: number; timer?: ReturnType<typeof setTimeout> }
  >();
  private server: http.Server | undefined;
  private wss: WebSocketServer | undefined;
  private advertised: string | undefined;
  /** Addresses that turned out to reach this member itself. */
  private readonly ownUrls = new Set<string>();
  private discovery: LanDiscovery | undefined;
  private closed = false;

  constructor(private readonly options: LanCarrierOptions) {
    this.advertised = options.advertise ? lanPeerUrl(options.advertise) : undefined;
  }

  /** The address the LAN listener took (its port may have been 0). */
  get address(): { host: string; port: number } | undefined {
    const a = this.server?.address();
    return a && typeof a === 'object' ? { host: a.address, port: a.port } : undefined;
  }

  /** Members this one has a working link with. */
  get linkedMembers(): string[] {
    return [...new Set([...this.links].filter((l) => l.ready && l.peer).map((l) => l.peer!))].sort();
  }

  get knownPeers(): string[] {
    return [...this.peers.keys()];
  }

  async start(): Promise<void> {
    const listen = this.options.listen;
    if (listen) {
      this.server = http.createServer((_req, res) => res.writeHead(404).end());
      this.wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
      this.server.on('upgrade', (req, socket, head) => {
        if (new URL(req.url ?? '/', 'http://lan.invalid').pathname !== LAN_PATH || this.closed)
          return void socket.destroy();
        let unproven = 0;
        for (const link of this.links) if (link.inbound && link.peer === undefined) unproven++;
        if (unproven >= MAX_UNPROVEN_LINKS) return void socket.destroy();
        this.wss!.handleUpgrade(req, socket, head, (ws) => this.adopt(ws, true));
      });
      await new Promise<void>((resolve, reject) => {
        this.server!.once('error', reject);
        this.server!.listen(listen.port, listen.host, () => resolve());
      });
      const bound = this.address!;
      if (!this.advertised && listen.host !== '0.0.0.0' && listen.host !== '::')
        this.advertised = lanPeerUrl(
          `ws://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${bound.port}`,
        );
    }
    for (const peer of this.options.peers) this.addPeer(peer);
    if (this.options.discovery && this.server) {
      this.discovery = new LanDiscovery(this.options.discovery, {
        secret: () => this.secret,
        listenPort: () => this.address?.port,
        found: (url) => this.addPeer(url),
      });
      await this.discovery.start().catch((error: unknown) => {
        // A network without multicast: the configured peers still work.
        this.options.log?.('LAN discovery is off', { error: String(error) });
        this.discovery = undefined;
      });
    }
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.discovery?.stop();
    for (const peer of this.peers.values()) clearTimeout(peer.timer);
    for (const link of this.links) link.ws.terminate();
    this.wss?.close();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  send(message: GroupMessage): void {
    const secret = this.secret;
    if (!secret || !this.self || this.closed) return;
    const payload: Payload = {
      from: this.self,
      ...(this.advertised ? { url: this.advertised } : {}),
      ...(message.type === 'heartbeat' ? { peers: this.knownPeers.slice(0, PEERS_TOLD) } : {}),
      body: message,
    };
    const text = JSON.stringify(payload);
    // One link per member: two members that dialled each other hold two links, and use one.
    const chosen = new Map<string, Link>();
    for (const link of this.links) {
      if (!link.ready) continue;
      if (link.peer === undefined) link.send(secret, text);
      else if (!chosen.has(link.peer)) chosen.set(link.peer, link);
    }
    for (const link of chosen.values()) link.send(secret, text);
  }

  onMessage(handler: (raw: unknown) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** A verified frame: its addresses are learnt, its group message handed on. */
  deliver(link: Link, payload: Payload): void {
    if (payload.from === this.self) {
      // An address of this very member (told by another, or configured): never dialled again.
      for (const [url, peer] of this.peers)
        if (peer.link === link) {
          this.ownUrls.add(url);
          this.peers.delete(url);
        }
      link.ws.close();
      return;
    }
    for (const url of [payload.url, ...(Array.isArray(payload.peers) ? payload.peers : [])])
      if (typeof url === 'string') this.addPeer(url);
    for (const handler of this.handlers) handler(payload.body);
  }

  dropped(link: Link): void {
    this.links.delete(link);
    for (const [url, peer] of this.peers) if (peer.link === link) this.redial(url);
  }

  private adopt(ws: WebSocket, inbound: boolean): Link {
    const link = new Link(ws, this, inbound, this.options.proveTimeoutMs ?? PROVE_TIMEOUT_MS);
    this.links.add(link);
    return link;
  }

  private addPeer(text: string): void {
    const url = lanPeerUrl(text);
    if (
      !url ||
      url === this.advertised ||
      this.ownUrls.has(url) ||
      this.peers.has(url) ||
      this.peers.size >= MAX_PEERS ||
      this.closed
    )
      return;
    this.peers.set(url, { link: null, failures: 0 });
    this.dial(url);
  }

  private dial(url: string): void {
    const peer = this.peers.get(url);
    if (!peer || this.closed) return;
    const ws = new WebSocket(url, { maxPayload: MAX_FRAME_BYTES, handshakeTimeout: HELLO_TIMEOUT_MS });
    peer.link = this.adopt(ws, false);
    ws.once('open', () => (peer.failures = 0));
  }

  private redial(url: string): void {
    const peer = this.peers.get(url);
    if (!peer || this.closed) return;
    peer.link = null;
    const delay = Math.min(REDIAL_MAX_MS, REDIAL_INITIAL_MS * 2 ** peer.failures++);
    clearTimeout(peer.timer);
    peer.timer = setTimeout(() => this.dial(url), delay);
    peer.timer.unref();
  }
}
