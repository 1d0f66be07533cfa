// The kiosk agent's side of lockstep: its own clock, which its renderer synchronizes to (GET
// /runtime/v1/time on the loopback origin, so the renderer never speaks to the LAN itself), and,
// when the kiosk is in a sync group with a LAN carrier, its membership of the group on the LAN.
//
// The agent's clock follows one reference: the group's LAN lead when another member leads, else
// the server (upstream's GET /runtime/v1/time, as browser players do), else nothing (it runs on its
// last rate: a lead with the internet down keeps the wall on its own clock). A change of reference
// starts a new burst; once it settles the renderer is told, and its estimate starts over without
// a step (its glass clock slews). A member joining a running group may lead only once its clock is
// on the group's (group-member.ts), so a reboot never hands the wall a clock that is off.
import type { ClockEstimate } from '../../sdk/lockstep/clock-estimator';
import { ClockSync, type ReferenceStamps } from '../../sdk/lockstep/clock-sync';
import { GlassClock } from '../../sdk/lockstep/glass-clock';
import { GroupMember } from '../../sdk/lockstep/group-member';
import type { BarrierAnnouncement } from '../../sdk/lockstep/group-protocol';
import { LanCarrier, type LanCarrierOptions } from './lan-carrier';

/** Rank of a kiosk configured as its group's lead (`--lan-lead`): it leads whenever it may. */
export const CONFIGURED_LEAD_RANK = 0;

export interface LanSettings extends LanCarrierOptions {
  /** This kiosk is the group's preferred lead. */
  lead?: boolean;
}

export interface Membership {
  /** This screen's id: the member id on the LAN. */
  self: string;
  group: string;
  /** The group's LAN key (from the runtime plane); null while it is not known yet. */
  key: Buffer | null;
  /** The timeline the screen plays (barriers name it). */
  timeline: string | null;
}

export interface AgentLockstepOptions {
  lan?: LanSettings;
  /** One timed exchange with the server, or a rejection when it cannot be reached. */
  upstreamTime(signal: AbortSignal): Promise<ReferenceStamps>;
  /** The lead's barrier for this member's timeline (its own when it leads). */
  onBarrier(barrier: BarrierAnnouncement): void;
  /** The clock moved onto another reference and settled there: the renderer starts its estimate over. */
  onReferenceChanged(): void;
  /** Tests: how far this kiosk's clock reads from the truth before any synchronization. */
  clockSkewMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export class AgentLockstep {
  /** The clock the renderer plays by: the reference's, slewed. */
  readonly clock: GlassClock;
  private readonly sync: ClockSync;
  private readonly carrier: LanCarrier | null;
  private member: GroupMember | null = null;
  private membership: Membership | null = null;
  private syncing = false;
  /** What the clock follows now (`lan:<member>`, `upstream`). */
  private reference = 'upstream';
  private lastEstimate: ClockEstimate | null = null;

  constructor(private readonly options: AgentLockstepOptions) {
    const local = () => performance.now();
    this.clock = new GlassClock(local, Date.now() - performance.now() + (options.clockSkewMs ?? 0));
    this.sync = new ClockSync({
      local,
      clock: this.clock,
      exchange: (signal) => {
        const member = this.member;
        if (member?.lead && !member.leads) return member.timeExchange(signal);
        return options.upstreamTime(signal);
      },
      onSteer: (_steering, estimate) => (this.lastEstimate = estimate),
      onSettled: () => {
        // A follower whose clock is on its lead's may lead from now on.
        if (this.reference.startsWith('lan:')) this.member?.markSynchronized();
        options.onReferenceChanged();
      },
    });
    this.carrier = options.lan ? new LanCarrier(options.lan) : null;
  }

  async start(): Promise<void> {
    await this.carrier?.start();
  }

  async stop(): Promise<void> {
    this.sync.stop();
    this.member?.stop();
    await this.carrier?.stop();
  }

  /** The LAN listener's address, when there is one. */
  get lanAddress(): { host: string; port: number } | undefined {
    return this.carrier?.address;
  }

  /** Whether the group's barriers go over the LAN (a carrier, a key and a group). */
  get onLan(): boolean {
    return this.member !== null;
  }

  /** The reference's time now and at local instant `t` (for the renderer's exchanges). */
  stamps(arrivedAt: number): { received_at_ms: number; sent_at_ms: number } {
    return { received_at_ms: this.clock.at(arrivedAt), sent_at_ms: this.clock.now() };
  }

  status() {
    return {
      group: this.membership?.group ?? null,
      on_lan: this.onLan,
      lead: this.member?.lead ?? null,
      leads: this.member?.leads ?? false,
      may_lead: this.member?.mayLead ?? false,
      linked: this.carrier?.linkedMembers ?? [],
      reference: this.reference,
      synchronized: this.clock.synchronized,
      error_bound_ms: this.lastEstimate?.errorBound ?? null,
    };
  }

  /**
   * What the kiosk plays now: its group and key (from the active manifest and the runtime plane),
   * or null outside a group. The clock follows its reference from the first time a group played.
   */
  configure(membership: Membership | null): void {
    const previous = this.membership;
    this.membership = membership;
    // Out of a group the clock keeps following its reference (a few small exchanges a minute) and
    // is ready when the screen joins one again.
    if (!membership) return this.leaveLan();
    if (!this.syncing) {
      this.syncing = true;
      this.sync.start();
    }
    const carrier = this.carrier;
    const sameGroup =
      previous !== null &&
      previous.self === membership.self &&
      previous.group === membership.group &&
      previous.key !== null &&
      membership.key !== null &&
      previous.key.equals(membership.key);
    if (!carrier || !membership.key) return this.leaveLan();
    if (!sameGroup || !this.member) {
      this.leaveLan();
      carrier.secret = { group: membership.group, key: membership.key };
      carrier.self = membership.self;
      this.member = new GroupMember({
        group: membership.group,
        self: membership.self,
        rank: this.options.lan?.lead ? CONFIGURED_LEAD_RANK : undefined,
        transport: carrier,
        local: () => performance.now(),
        now: () => this.clock.now(),
        onLead: (lead, self) => this.leadChanged(lead, self),
        onBarrier: (barrier) => this.options.onBarrier(barrier),
      });
      this.member.start();
    }
    this.member.setTimeline(membership.timeline);
  }

  /**
   * The renderer's application asked for page `pageIndex`: announced to the group when this member
   * leads (null when it does not: the lead's own application asks), or 'not-on-lan'.
   */
  advance(timeline: string, pageIndex: number): BarrierAnnouncement | null | 'not-on-lan' {
    const member = this.member;
    if (!member) return 'not-on-lan';
    member.setTimeline(timeline);
    return member.advance(pageIndex);
  }

  private leaveLan(): void {
    if (!this.member) return;
    this.member.stop();
    this.member = null;
    if (this.carrier) this.carrier.secret = null;
    this.referenceIs('upstream');
  }

  private leadChanged(lead: string | null, self: boolean): void {
    this.options.log?.('lockstep lead', { lead, self });
    this.referenceIs(lead && !self ? `lan:${lead}` : 'upstream');
  }

  private referenceIs(reference: string): void {
    if (reference === this.reference) return;
    this.reference = reference;
    if (this.syncing) this.sync.referenceChanged();
  }
}
