import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClockSync } from './clock-sync';
import { GlassClock } from './glass-clock';
import {
  BARRIER_LEAD_MS,
  GroupMember,
  HEARTBEAT_MS,
  JOIN_MS,
  LEASE_MS,
  LeadElection,
  type GroupMemberOptions,
} from './group-member';
import type { BarrierAnnouncement, GroupMessage, GroupTransport } from './group-protocol';

beforeEach(() => vi.useFakeTimers());

/** A group that starts together has elected its lead after this: the join period, then a heartbeat. */
const SETTLE_MS = JOIN_MS + HEARTBEAT_MS + 10;
afterEach(() => vi.useRealTimers());

/** A LAN in memory: broadcast with a one-way delay, members that can be cut off or silenced. */
class FakeLan {
  private readonly handlers = new Map<string, Set<(raw: unknown) => void>>();
  private readonly cut = new Set<string>();
  /** Pairs of members that cannot hear each other. */
  private readonly partitions: Array<[Set<string>, Set<string>]> = [];
  sent: GroupMessage[] = [];

  constructor(private readonly delayMs = 2) {}

  transport(member: string): GroupTransport {
    return {
      send: (message) => {
        this.sent.push(message);
        if (this.cut.has(member)) return;
        for (const [to, handlers] of this.handlers) {
          if (to === member || this.cut.has(to) || this.separated(member, to)) continue;
          const copy = JSON.parse(JSON.stringify(message)) as unknown;
          setTimeout(() => {
            for (const h of handlers) h(copy);
          }, this.delayMs);
        }
      },
      onMessage: (handler) => {
        const set = this.handlers.get(member) ?? new Set();
        set.add(handler);
        this.handlers.set(member, set);
        return () => set.delete(handler);
      },
    };
  }

  private separated(a: string, b: string): boolean {
    return this.partitions.some(([x, y]) => (x.has(a) && y.has(b)) || (x.has(b) && y.has(a)));
  }

  /** The member's power is cut: it neither sends nor receives. */
  kill(member: string): void {
    this.cut.add(member);
  }

  revive(member: string): void {
    this.cut.delete(member);
  }

  split(a: string[], b: string[]): void {
    this.partitions.push([new Set(a), new Set(b)]);
  }

  heal(): void {
    this.partitions.length = 0;
  }
}

interface Member {
  id: string;
  member: GroupMember;
  leads: string[];
  barriers: BarrierAnnouncement[];
}

/** A member whose glass clock reads `offset` ahead of the fake timers' clock. */
function join(lan: FakeLan, id: string, extra: Partial<GroupMemberOptions> & { offset?: number } = {}): Member {
  const leads: string[] = [];
  const barriers: BarrierAnnouncement[] = [];
  const member = new GroupMember({
    group: 'wall',
    self: id,
    transport: lan.transport(id),
    local: () => performance.now(),
    now: () => performance.now() + (extra.offset ?? 0),
    onLead: (lead) => leads.push(lead ?? ''),
    onBarrier: (b) => barriers.push(b),
    ...extra,
  });
  member.setTimeline('pl_lobby@1000');
  member.start();
  return { id, member, leads, barriers };
}

describe('lead election', () => {
  it('picks the lowest rank, then the smallest id, among members heard within the lease', () => {
    const election = new LeadElection({ member: 'scr_b', rank: 100 });
    expect(election.lead(0)).toBe('scr_b');
    election.heard('scr_c', 100, 0);
    election.heard('scr_a', 100, 0);
    expect(election.lead(10)).toBe('scr_a');
    election.heard('scr_z', 0, 10);
    expect(election.lead(20)).toBe('scr_z');
    // scr_z and scr_a fall silent: after the lease only the living count.
    election.heard('scr_c', 100, LEASE_MS);
    expect(election.lead(10 + LEASE_MS + 1)).toBe('scr_b');
    expect(
      election
        .alive(10 + LEASE_MS + 1)
        .map((c) => c.member)
        .sort(),
    ).toEqual(['scr_b', 'scr_c']);
  });

  it('agrees on one lead across the group within a heartbeat', async () => {
    const lan = new FakeLan();
    const members = ['scr_c', 'scr_a', 'scr_d', 'scr_b'].map((id) => join(lan, id));
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    expect(members.map((m) => m.member.lead)).toEqual(['scr_a', 'scr_a', 'scr_a', 'scr_a']);
    expect(members.filter((m) => m.member.leads).map((m) => m.id)).toEqual(['scr_a']);
  });

  it('re-elects when the lead dies, within the lease and a heartbeat, and the group agrees', async () => {
    const lan = new FakeLan();
    const members = ['scr_a', 'scr_b', 'scr_c'].map((id) => join(lan, id));
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    expect(members.map((m) => m.member.lead)).toEqual(['scr_a', 'scr_a', 'scr_a']);
    lan.kill('scr_a');
    await vi.advanceTimersByTimeAsync(LEASE_MS + HEARTBEAT_MS);
    expect(members.slice(1).map((m) => m.member.lead)).toEqual(['scr_b', 'scr_b']);
    expect(members[1]!.leads.at(-1)).toBe('scr_b');
    // The old lead comes back: the smallest id leads again, everywhere.
    lan.revive('scr_a');
    await vi.advanceTimersByTimeAsync(2 * HEARTBEAT_MS);
    expect(members.map((m) => m.member.lead)).toEqual(['scr_a', 'scr_a', 'scr_a']);
  });

  it('lets a configured lead (rank 0) lead whatever its id', async () => {
    const lan = new FakeLan();
    const members = [join(lan, 'scr_a'), join(lan, 'scr_z', { rank: 0 })];
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    expect(members.map((m) => m.member.lead)).toEqual(['scr_z', 'scr_z']);
  });

  it('heals a split: each side leads itself, then one lead again', async () => {
    const lan = new FakeLan();
    const members = ['scr_a', 'scr_b', 'scr_c', 'scr_d'].map((id) => join(lan, id));
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    lan.split(['scr_a', 'scr_b'], ['scr_c', 'scr_d']);
    await vi.advanceTimersByTimeAsync(LEASE_MS + 2 * HEARTBEAT_MS);
    expect(members.map((m) => m.member.lead)).toEqual(['scr_a', 'scr_a', 'scr_c', 'scr_c']);
    lan.heal();
    await vi.advanceTimersByTimeAsync(2 * HEARTBEAT_MS);
    expect(members.map((m) => m.member.lead)).toEqual(['scr_a', 'scr_a', 'scr_a', 'scr_a']);
  });
});

describe('joining a running group', () => {
  it('never elects a member that may not lead yet, whatever its rank or id', () => {
    const election = new LeadElection({ member: 'scr_b', rank: 100 });
    election.heard('scr_a', 0, 0, false);
    expect(election.lead(10)).toBe('scr_b');
    expect(election.lead(10, false)).toBeNull();
    election.heard('scr_c', 100, 10, true);
    expect(election.lead(20, false)).toBe('scr_c');
  });

  it('a late joiner with the smallest id follows the lead until its clock is the group’s, then leads', async () => {
    const lan = new FakeLan();
    const members = ['scr_b', 'scr_c'].map((id) => join(lan, id));
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    const late = join(lan, 'scr_a');
    // Long past its join period: it heard a member able to lead, so it follows it.
    await vi.advanceTimersByTimeAsync(3 * JOIN_MS);
    expect([late, ...members].map((m) => m.member.lead)).toEqual(['scr_b', 'scr_b', 'scr_b']);
    expect(late.member.mayLead).toBe(false);
    late.member.markSynchronized();
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS + 10);
    expect([late, ...members].map((m) => m.member.lead)).toEqual(['scr_a', 'scr_a', 'scr_a']);
  });

  it('a lead that reboots comes back as a follower; the group keeps the lead it re-elected', async () => {
    const lan = new FakeLan();
    const members = ['scr_a', 'scr_b', 'scr_c'].map((id) => join(lan, id));
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    lan.kill('scr_a');
    members[0]!.member.stop();
    await vi.advanceTimersByTimeAsync(LEASE_MS + HEARTBEAT_MS);
    expect(members.slice(1).map((m) => m.member.lead)).toEqual(['scr_b', 'scr_b']);
    // The same screen starts again (a new process: it knows nothing of the group yet).
    lan.revive('scr_a');
    const rebooted = join(lan, 'scr_a');
    await vi.advanceTimersByTimeAsync(3 * JOIN_MS);
    expect([rebooted, ...members.slice(1)].map((m) => m.member.lead)).toEqual(['scr_b', 'scr_b', 'scr_b']);
  });
});

describe('barrier', () => {
  it('announces page P at an instant ahead; every member gets the same barrier before it', async () => {
    const lan = new FakeLan(5);
    const members = ['scr_a', 'scr_b', 'scr_c'].map((id) => join(lan, id));
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    const announced = members[0]!.member.advance(3)!;
    expect(announced.at).toBe(performance.now() + BARRIER_LEAD_MS);
    await vi.advanceTimersByTimeAsync(10);
    for (const m of members) expect(m.barriers).toEqual([announced]);
    // Received in time to prepare: well before the instant.
    expect(performance.now()).toBeLessThan(announced.at - BARRIER_LEAD_MS / 2);
  });

  it('ignores an advance asked of a member that does not lead', async () => {
    const lan = new FakeLan();
    const members = ['scr_a', 'scr_b'].map((id) => join(lan, id));
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    expect(members[1]!.member.advance(2)).toBeNull();
    await vi.advanceTimersByTimeAsync(10);
    expect(members.flatMap((m) => m.barriers)).toEqual([]);
  });

  it('refuses barriers from a member it does not take for the lead, of another timeline, or older than the last', async () => {
    const lan = new FakeLan();
    const follower = join(lan, 'scr_b');
    join(lan, 'scr_a');
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    const rogue = lan.transport('scr_c');
    const barrier = (member: string, timeline: string, at: number): GroupMessage => ({
      type: 'barrier',
      group: 'wall',
      member,
      barrier: { timeline, pageIndex: 1, at },
    });
    rogue.send(barrier('scr_c', 'pl_lobby@1000', 99_000));
    lan.transport('scr_a').send(barrier('scr_a', 'pl_other@1', 99_000));
    lan.transport('scr_a').send(barrier('scr_a', 'pl_lobby@1000', 99_000));
    lan.transport('scr_a').send(barrier('scr_a', 'pl_lobby@1000', 98_000));
    lan
      .transport('scr_a')
      .send({ type: 'barrier', group: 'wall', member: 'scr_a', barrier: { nonsense: true } } as never);
    await vi.advanceTimersByTimeAsync(10);
    expect(follower.barriers).toEqual([{ timeline: 'pl_lobby@1000', pageIndex: 1, at: 99_000 }]);
  });

  it('gives a member that joins late the last barrier, from the lead’s heartbeat', async () => {
    const lan = new FakeLan();
    const lead = join(lan, 'scr_a');
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    const announced = lead.member.advance(4)!;
    await vi.advanceTimersByTimeAsync(5 * HEARTBEAT_MS);
    const late = join(lan, 'scr_b');
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    expect(late.member.lead).toBe('scr_a');
    expect(late.barriers).toEqual([announced]);
  });

  it('forgets barriers of a timeline it no longer plays', async () => {
    const lan = new FakeLan();
    const lead = join(lan, 'scr_a');
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    lead.member.advance(1);
    expect(lead.member.barrier).not.toBeNull();
    lead.member.setTimeline('pl_lobby@2000');
    expect(lead.member.barrier).toBeNull();
  });
});

describe('the lead’s clock over the LAN', () => {
  it('puts followers on the lead’s clock, whatever their own clocks say', async () => {
    const lan = new FakeLan(3);
    join(lan, 'scr_a', { offset: 1_700_000_000_000 });
    const follower = join(lan, 'scr_b');
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    const clock = new GlassClock(() => performance.now(), 0);
    const sync = new ClockSync({
      exchange: (signal) => follower.member.timeExchange(signal),
      local: () => performance.now(),
      clock,
    });
    sync.start();
    await vi.advanceTimersByTimeAsync(2000);
    expect(clock.synchronized).toBe(true);
    expect(clock.now() - (performance.now() + 1_700_000_000_000)).toBeCloseTo(0, 3);
    sync.stop();
  });

  it('leaves nothing on the long-lived signal its exchanges share, answered or not', async () => {
    const lan = new FakeLan();
    join(lan, 'scr_a');
    const follower = join(lan, 'scr_b');
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    // A ClockSync passes the same signal to every exchange of its life (one every ten seconds, for days).
    const signal = new AbortController().signal;
    for (let i = 0; i < 20; i++) {
      const exchange = follower.member.timeExchange(signal);
      await vi.advanceTimersByTimeAsync(10);
      await exchange;
    }
    lan.kill('scr_a');
    const unanswered = expect(follower.member.timeExchange(signal)).rejects.toThrow('did not answer');
    await vi.advanceTimersByTimeAsync(3000);
    await unanswered;
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('refuses an exchange at once when its signal is aborted already (it would wait out its timeout)', async () => {
    const lan = new FakeLan();
    join(lan, 'scr_a');
    const follower = join(lan, 'scr_b');
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    const controller = new AbortController();
    controller.abort();
    let outcome: unknown = 'pending';
    follower.member.timeExchange(controller.signal).then(
      () => (outcome = 'answered'),
      (error: Error) => (outcome = error.message),
    );
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toBe('aborted');
  });

  it('gives up an exchange the lead does not answer', async () => {
    const lan = new FakeLan();
    join(lan, 'scr_a');
    const follower = join(lan, 'scr_b');
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    lan.kill('scr_a');
    const exchange = follower.member.timeExchange(new AbortController().signal);
    const outcome = expect(exchange).rejects.toThrow('did not answer');
    await vi.advanceTimersByTimeAsync(3000);
    await outcome;
  });
});
