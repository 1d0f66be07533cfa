// One member of a sync group on a LAN, over any broadcast transport: it heartbeats, elects the
// lead (deterministically: every member that hears the same members picks the same one, and the
// lead is re-elected when its heartbeats stop; a member that joins a running group follows it
// until its clock is the group's, so a reboot never hands the lead to a clock that is off), follows the lead's barrier announcements ("page P
// at instant T") for advances no member can compute alone, and answers or asks timed exchanges so
// followers play by the lead's clock. Pure of any carrier: the kiosk agent puts it on ws, the tests
// on an in-memory network.
import type { ReferenceStamps } from './clock-sync';
import { type BarrierAnnouncement, GroupMessage, type GroupTransport } from './group-protocol';

/** A member says it is alive this often ... */
export const HEARTBEAT_MS = 1000;
/** ... and is taken for dead after this long without a word (three heartbeats lost in a row). */
export const LEASE_MS = 3500;
/** The lead announces a page this far ahead: the announcement crosses the LAN and members show it warm. */
export const BARRIER_LEAD_MS = 500;
/** A time exchange with no answer within this is given up (the clock sync tries again later). */
export const TIME_EXCHANGE_TIMEOUT_MS = 2000;
/** Rank of a member started without a configured lead: all equal, so the smallest id leads. */
export const DEFAULT_RANK = 100;
/**
 * A member that hears no member able to lead within this of its start may lead itself (it is
 * alone, or the whole group starts together); one that hears such a member follows it and may
 * lead only once its clock is on the lead's (`markSynchronized`).
 */
export const JOIN_MS = LEASE_MS;

interface Candidate {
  member: string;
  rank: number;
}

const before = (a: Candidate, b: Candidate) => a.rank < b.rank || (a.rank === b.rank && a.member < b.member);

/**
 * Who leads: among the members able to lead (eligible) heard from within the lease, and this one
 * when it is able, the lowest rank, then the smallest id; null when none is.
 */
export class LeadElection {
  private readonly heardAt = new Map<string, { rank: number; at: number; eligible: boolean }>();

  constructor(private readonly self: Candidate) {}

  heard(member: string, rank: number, at: number, eligible = true): void {
    this.heardAt.set(member, { rank, at, eligible });
  }

  /** The living members able to lead (this one among them when `selfEligible`). */
  alive(at: number, selfEligible = true): Candidate[] {
    const alive: Candidate[] = selfEligible ? [this.self] : [];
    for (const [member, h] of this.heardAt) {
      if (at - h.at > LEASE_MS) this.heardAt.delete(member);
      else if (h.eligible) alive.push({ member, rank: h.rank });
    }
    return alive;
  }

  lead(at: number, selfEligible = true): string | null {
    const alive = this.alive(at, selfEligible);
    return alive.length === 0 ? null : alive.reduce((best, c) => (before(c, best) ? c : best)).member;
  }
}

export interface GroupMemberOptions {
  group: string;
  self: string;
  /** Lower leads first: give the configured lead 0; the default lets the smallest id lead. */
  rank?: number;
  transport: GroupTransport;
  /** The device's monotonic clock, for leases (a clock correction must not kill a member). */
  local(): number;
  /** The member's glass clock: the instants of barriers and the lead's answers to time exchanges. */
  now(): number;
  /** The lead changed (`self`: this member leads now; null: no member able to lead is heard yet). */
  onLead?(lead: string | null, self: boolean): void;
  /** A barrier of this member's timeline, from its lead (its own included): show page P at T. */
  onBarrier?(barrier: BarrierAnnouncement): void;
}

export class GroupMember {
  private readonly election: LeadElection;
  private readonly rank: number;
  private unsubscribe: (() => void) | null = null;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private currentLead: string | null = null;
  /** Whether this member may lead: its clock is the group's (see JOIN_MS). */
  private eligible = false;
  private startedAt = 0;
  private timeline: string | null = null;
  private latest: BarrierAnnouncement | null = null;
  private nextExchangeId = 1;
  private readonly exchanges = new Map<number, (stamps: ReferenceStamps) => void>();

  constructor(private readonly options: GroupMemberOptions) {
    this.rank = options.rank ?? DEFAULT_RANK;
    this.election = new LeadElection({ member: options.self, rank: this.rank });
  }

  get lead(): string | null {
    return this.currentLead;
  }

  /** Whether this member may lead (it could be elected). */
  get mayLead(): boolean {
    return this.eligible;
  }

  /** This member's clock is on its lead's now: it may be elected from here on. */
  markSynchronized(): void {
    if (this.eligible) return;
    this.eligible = true;
    this.reelect();
  }

  get leads(): boolean {
    return this.currentLead === this.options.self;
  }

  /** The last barrier of this member's timeline (a member that joins starts from it). */
  get barrier(): BarrierAnnouncement | null {
    return this.latest;
  }

  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.options.transport.onMessage((raw) => this.receive(raw));
    this.startedAt = this.options.local();
    this.beat();
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    clearInterval(this.heartbeat);
  }

  /** What this member plays now; barriers of another timeline do not concern it. */
  setTimeline(key: string | null): void {
    if (key === this.timeline) return;
    this.timeline = key;
    this.latest = null;
  }

  /**
   * A non-deterministic advance (the controlling application asked for the next page). Only the
   * lead's counts: it announces page `pageIndex` at now + BARRIER_LEAD_MS and returns the barrier;
   * elsewhere it is ignored (null), since every member shows the same application.
   */
  advance(pageIndex: number): BarrierAnnouncement | null {
    if (!this.leads || this.timeline === null) return null;
    const barrier = { timeline: this.timeline, pageIndex, at: this.options.now() + BARRIER_LEAD_MS };
    this.accept(barrier);
    this.send({ type: 'barrier', group: this.options.group, member: this.options.self, barrier });
    return barrier;
  }

  /** One timed exchange with the lead, for a ClockSync that puts this member on the lead's clock. */
  timeExchange(signal: AbortSignal): Promise<ReferenceStamps> {
    if (this.leads) return Promise.reject(new Error('the lead keeps its own clock'));
    if (this.currentLead === null) return Promise.reject(new Error('no lead is heard yet'));
    if (signal.aborted) return Promise.reject(new Error('aborted'));
    const id = this.nextExchangeId++;
    return new Promise<ReferenceStamps>((resolve, reject) => {
      // The signal is the ClockSync's, shared by every exchange of its life: each removes its own listener.
      const settle = () => {
        this.exchanges.delete(id);
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
      };
      const fail = (reason: string) => {
        settle();
        reject(new Error(reason));
      };
      const aborted = () => fail('aborted');
      const timer = setTimeout(() => fail('the lead did not answer'), TIME_EXCHANGE_TIMEOUT_MS);
      signal.addEventListener('abort', aborted, { once: true });
      this.exchanges.set(id, (stamps) => {
        settle();
        resolve(stamps);
      });
      this.send({ type: 'time.request', group: this.options.group, member: this.options.self, id });
    });
  }

  private send(message: GroupMessage): void {
    this.options.transport.send(message);
  }

  private beat(): void {
    // Nobody able to lead was heard since the start: this member's clock is as good as any.
    const local = this.options.local();
    if (!this.eligible && local - this.startedAt >= JOIN_MS && this.election.lead(local, false) === null)
      this.eligible = true;
    this.reelect();
    this.send({
      type: 'heartbeat',
      group: this.options.group,
      member: this.options.self,
      rank: this.rank,
      eligible: this.eligible,
      timeline: this.timeline,
      barrier: this.leads ? this.latest : null,
    });
  }

  private reelect(): void {
    const lead = this.election.lead(this.options.local(), this.eligible);
    if (lead === this.currentLead) return;
    this.currentLead = lead;
    this.options.onLead?.(lead, lead === this.options.self);
  }

  private accept(barrier: BarrierAnnouncement): void {
    if (barrier.timeline !== this.timeline) return;
    if (this.latest && barrier.at <= this.latest.at) return;
    this.latest = barrier;
    this.options.onBarrier?.(barrier);
  }

  private receive(raw: unknown): void {
    const receivedAt = this.options.now();
    const parsed = GroupMessage.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    if (message.group !== this.options.group || message.member === this.options.self) return;
    switch (message.type) {
      case 'heartbeat':
        this.election.heard(message.member, message.rank, this.options.local(), message.eligible);
        this.reelect();
        if (message.member === this.currentLead && message.barrier) this.accept(message.barrier);
        return;
      case 'barrier':
        this.reelect();
        if (message.member === this.currentLead) this.accept(message.barrier);
        return;
      case 'time.request':
        if (!this.leads) return;
        this.send({
          type: 'time.answer',
          group: this.options.group,
          member: this.options.self,
          to: message.member,
          id: message.id,
          receivedAt,
          sentAt: this.options.now(),
        });
        return;
      case 'time.answer':
        if (message.to !== this.options.self || message.member !== this.currentLead) return;
        this.exchanges.get(message.id)?.({ receivedAt: message.receivedAt, sentAt: message.sentAt });
        return;
    }
  }
}
