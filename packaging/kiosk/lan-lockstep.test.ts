// The LAN carrier on real sockets (127.0.0.1): members whose clocks are seconds apart, with no
// server to ask (upstream is down), converge to the lead's clock; the lead dies and another takes
// over without a jump; a member that joins late follows before it leads; and the link protocol
// refuses frames of another key, replayed frames and frames recorded on another link.
import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { BarrierAnnouncement } from '../../sdk/lockstep/group-protocol';
import { LAN_PATH, LanCarrier, MAX_UNPROVEN_LINKS } from './lan-carrier';
import type { DiscoverySettings } from './lan-discovery';
import { AgentLockstep } from './lan-lockstep';
import { until } from './agent.fixtures';

/**
 * Members on one machine read the same monotonic clock, so their glass clocks can be compared
 * exactly: after synchronization over loopback ws they agree within this (the estimator bounds its
 * error by half the best round trip, well under a millisecond here; the margin is for a loaded CI).
 */
const CONVERGED_MS = 10;

const KEY = crypto.randomBytes(32);
const TIMELINE = 'pl_wall@3@2026-11-25T10:00:05.000Z';
const started: AgentLockstep[] = [];

afterEach(async () => {
  for (const m of started.splice(0)) await m.stop();
});

interface Kiosk {
  id: string;
  lockstep: AgentLockstep;
  barriers: BarrierAnnouncement[];
  referenceChanges: number;
  url: string;
}

async function kiosk(
  id: string,
  skewMs: number,
  peers: string[],
  key = KEY,
  discovery?: DiscoverySettings,
): Promise<Kiosk> {
  const k: Kiosk = { id, lockstep: undefined as never, barriers: [], referenceChanges: 0, url: '' };
  k.lockstep = new AgentLockstep({
    lan: { listen: { host: '127.0.0.1', port: 0 }, peers, ...(discovery ? { discovery } : {}) },
    clockSkewMs: skewMs,
    // Upstream is down: only the LAN can synchronize anyone.
    upstreamTime: () => Promise.reject(new Error('upstream is unreachable')),
    onBarrier: (b) => k.barriers.push(b),
    onReferenceChanged: () => k.referenceChanges++,
  });
  await k.lockstep.start();
  started.push(k.lockstep);
  k.url = `ws://127.0.0.1:${k.lockstep.lanAddress!.port}`;
  k.lockstep.configure({ self: id, group: 'wall', key, timeline: TIMELINE });
  return k;
}

/** How far `k`'s clock reads from `reference`'s at this instant. */
const apart = (k: Kiosk, reference: Kiosk) => Math.abs(k.lockstep.clock.now() - reference.lockstep.clock.now());

describe('lockstep over the LAN', () => {
  it('puts the wall on the lead’s clock with upstream down, re-elects without a jump, and takes a late joiner in', async () => {
    const a = await kiosk('scr_a', 0, []);
    // b and c know only a's address: they find each other through it.
    const b = await kiosk('scr_b', 3_000, [a.url]);
    const c = await kiosk('scr_c', -2_500, [a.url]);
    const wall = [a, b, c];
    await until(() => wall.every((k) => k.lockstep.status().lead === 'scr_a'), 15_000);
    // (A member that became able to lead on its own, a moment before it heard a, is then put on a's clock.)
    const converged = () => apart(b, a) < CONVERGED_MS && apart(c, a) < CONVERGED_MS;
    await until(() => b.lockstep.status().may_lead && c.lockstep.status().may_lead && converged(), 10_000);
    await until(() => b.lockstep.status().linked.includes('scr_c'), 5_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(apart(b, a)).toBeLessThan(CONVERGED_MS);
    expect(apart(c, a)).toBeLessThan(CONVERGED_MS);
    expect(b.referenceChanges).toBeGreaterThan(0);

    // The lead announces page 2; every member hears the same barrier ahead of its instant.
    const barrier = a.lockstep.advance(TIMELINE, 2);
    expect(barrier).not.toBeNull();
    expect(b.lockstep.advance(TIMELINE, 5)).toBeNull(); // a follower's advance is not the group's
    await until(() => b.barriers.length > 0 && c.barriers.length > 0, 2_000);
    expect([b.barriers, c.barriers]).toEqual([[barrier], [barrier]]);
    expect(a.lockstep.clock.now()).toBeLessThan((barrier as BarrierAnnouncement).at);

    // The lead dies: b (the smallest id left) takes over on the clock it had, and c follows it.
    await a.lockstep.stop();
    await until(() => b.lockstep.status().leads && c.lockstep.status().lead === 'scr_b', 10_000);
    await new Promise((r) => setTimeout(r, 1_500));
    // a's clock runs on in this process: the wall is still on it (b kept it, c follows b).
    expect(apart(b, a)).toBeLessThan(CONVERGED_MS);
    expect(apart(c, a)).toBeLessThan(CONVERGED_MS);

    // A kiosk with the smallest id joins late, its clock an hour off: it follows b until it is on
    // the wall's clock, then leads, and the wall stays where it was.
    const late = await kiosk('scr_0', 3_600_000, [c.url]);
    await until(() => late.lockstep.status().lead === 'scr_b', 10_000);
    await until(() => [late, b, c].every((k) => k.lockstep.status().lead === 'scr_0'), 15_000);
    await new Promise((r) => setTimeout(r, 1_500));
    for (const k of [late, b, c]) expect(apart(k, a)).toBeLessThan(CONVERGED_MS);
  }, 60_000);

  it('never hears a member of another key', async () => {
    const a = await kiosk('scr_b', 0, []);
    const rogue = await kiosk('scr_a', 5_000, [a.url], crypto.randomBytes(32));
    // Each leads itself once its join period is over: neither ever heard the other.
    await until(() => a.lockstep.status().lead === 'scr_b' && rogue.lockstep.status().lead === 'scr_a', 10_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(a.lockstep.status()).toMatchObject({ lead: 'scr_b', linked: [] });
    expect(rogue.lockstep.status()).toMatchObject({ lead: 'scr_a', linked: [] });
  }, 15_000);
});

describe('discovery on the LAN', () => {
  it('finds the members of the group by multicast, with no peer configured, and ignores another key’s', async () => {
    // A port of this test's own, on loopback: other runs on the machine announce elsewhere.
    const discovery = { port: 40_000 + Math.floor(Math.random() * 20_000), interface: '127.0.0.1' };
    const a = await kiosk('scr_a', 0, [], KEY, discovery);
    const b = await kiosk('scr_b', 2_000, [], KEY, discovery);
    const stranger = await kiosk('scr_s', 0, [], crypto.randomBytes(32), discovery);
    await until(() => a.lockstep.status().linked.includes('scr_b') && b.lockstep.status().lead === 'scr_a', 15_000);
    await until(() => b.lockstep.status().may_lead && apart(b, a) < CONVERGED_MS, 10_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(apart(b, a)).toBeLessThan(CONVERGED_MS);
    expect(stranger.lockstep.status().linked).toEqual([]);
    expect(a.lockstep.status().linked).toEqual(['scr_b']);
  }, 30_000);
});

describe('the LAN link protocol', () => {
  const mac = (key: Buffer, nonce: string, seq: number, payload: string) =>
    crypto
      .createHmac('sha256', key)
      .update(`marquee-lan/1\u0000wall\u0000${nonce}\u0000${seq}\u0000${payload}`)
      .digest('base64url');

  /** A raw link to the carrier: its nonce, and a way to send frames. */
  async function rawLink(port: number) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${LAN_PATH}`);
    const nonce = await new Promise<string>((resolve, reject) => {
      ws.once('message', (data) => resolve((JSON.parse(String(data)) as { n: string }).n));
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ t: 'hello', n: crypto.randomBytes(16).toString('base64url') }));
    return {
      nonce,
      send: (frame: unknown) => ws.send(JSON.stringify(frame)),
      close: () => ws.terminate(),
    };
  }

  it('holds few inbound links that prove nothing, and not for long: strangers cannot fill its sockets', async () => {
    const carrier = new LanCarrier({ listen: { host: '127.0.0.1', port: 0 }, peers: [], proveTimeoutMs: 500 });
    await carrier.start();
    carrier.secret = { group: 'wall', key: KEY };
    carrier.self = 'scr_self';
    const heard: unknown[] = [];
    carrier.onMessage((raw) => heard.push(raw));
    try {
      // Strangers on the LAN: each says hello, then nothing a key could have made.
      const attempts = await Promise.allSettled(
        Array.from({ length: 40 }, async () => {
          const ws = new WebSocket(`ws://127.0.0.1:${carrier.address!.port}${LAN_PATH}`);
          const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
          await new Promise<void>((resolve, reject) => {
            ws.once('message', () => resolve());
            ws.once('error', reject);
          });
          ws.send(JSON.stringify({ t: 'hello', n: crypto.randomBytes(16).toString('base64url') }));
          return { closed };
        }),
      );
      const held = attempts.filter((a) => a.status === 'fulfilled').map((a) => a.value.closed);
      expect(held.length).toBeGreaterThan(0);
      expect(held.length).toBeLessThanOrEqual(MAX_UNPROVEN_LINKS);
      // Those let in are closed once they had their time to prove themselves.
      await Promise.all(held);
      // A member still gets in, and is heard.
      const member = await rawLink(carrier.address!.port);
      const payload = JSON.stringify({ from: 'scr_peer', body: { type: 'probe', n: 1 } });
      member.send({ t: 'f', s: 1, p: payload, m: mac(KEY, member.nonce, 1, payload) });
      await until(() => heard.length === 1, 2_000);
      member.close();
    } finally {
      await carrier.stop();
    }
  });

  it('delivers a frame of the group’s key once, and refuses replays, other links’ frames and other keys', async () => {
    const carrier = new LanCarrier({ listen: { host: '127.0.0.1', port: 0 }, peers: [] });
    await carrier.start();
    carrier.secret = { group: 'wall', key: KEY };
    carrier.self = 'scr_self';
    const heard: unknown[] = [];
    carrier.onMessage((raw) => heard.push(raw));
    try {
      const one = await rawLink(carrier.address!.port);
      const payload = JSON.stringify({ from: 'scr_peer', body: { type: 'probe', n: 1 } });
      const frame = { t: 'f', s: 1, p: payload, m: mac(KEY, one.nonce, 1, payload) };
      one.send(frame);
      await until(() => heard.length === 1, 2_000);
      one.send(frame); // replayed on its own link
      const other = await rawLink(carrier.address!.port);
      other.send(frame); // recorded on one link, played on another
      const forged = JSON.stringify({ from: 'scr_peer', body: { type: 'probe', n: 2 } });
      other.send({ t: 'f', s: 1, p: forged, m: mac(crypto.randomBytes(32), other.nonce, 1, forged) });
      other.send({ t: 'f', s: 2, p: forged, m: mac(KEY, other.nonce, 1, forged) }); // the MAC names another seq
      // A good frame after them all: once it is heard, the ones before it were refused, not late.
      const good = JSON.stringify({ from: 'scr_peer', body: { type: 'probe', n: 3 } });
      other.send({ t: 'f', s: 3, p: good, m: mac(KEY, other.nonce, 3, good) });
      await until(() => heard.length === 2, 2_000);
      expect(heard).toEqual([
        { type: 'probe', n: 1 },
        { type: 'probe', n: 3 },
      ]);
      one.close();
      other.close();
    } finally {
      await carrier.stop();
    }
  });
});
