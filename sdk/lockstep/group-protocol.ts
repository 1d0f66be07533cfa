// The lockstep channel between members of one sync group on a LAN (kiosk agents over ws, or any
// other carrier): heartbeats that elect the lead, the lead's barrier announcements for advances no
// member can compute alone, and timed exchanges that put members on the lead's clock. Messages are
// broadcast on the group's channel; each is validated on arrival, since it comes off the network.
import { z } from 'zod';
import { ScreenSyncGroup } from '../contract/screens';

/** Member ids are screen ids (or any stable, unique, URL-safe id). */
const MemberId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/);
/** What a group plays: members move together only on the same timeline (playlist revision and epoch). */
const TimelineKey = z.string().min(1).max(256);
const Instant = z.number().finite();

/** "Page `pageIndex` of `timeline` at reference instant `at`": a new anchor for the group's timeline. */
export const BarrierAnnouncement = z.strictObject({
  timeline: TimelineKey,
  pageIndex: z.number().int().min(0),
  at: Instant,
});
export type BarrierAnnouncement = z.infer<typeof BarrierAnnouncement>;

/** How many timelines a `BarrierBook` remembers: the one playing, the ones just left, the one coming. */
const TIMELINES_KEPT = 4;

/**
 * The last barrier of each timeline a member heard of (the few most recent timelines). Kept per
 * timeline, so a late barrier of one timeline never takes the place of a newer one's of another.
 */
export class BarrierBook {
  private readonly byTimeline = new Map<string, BarrierAnnouncement>();

  /**
   * Keeps `barrier` when it is the first of its timeline or later than the one kept for it, and
   * says whether it did (an older or repeated one of that timeline is not news).
   */
  offer(barrier: BarrierAnnouncement): boolean {
    const last = this.byTimeline.get(barrier.timeline);
    if (last && barrier.at <= last.at) return false;
    // Map order is insertion order: re-inserting makes this timeline the most recent.
    this.byTimeline.delete(barrier.timeline);
    this.byTimeline.set(barrier.timeline, barrier);
    for (const timeline of this.byTimeline.keys()) {
      if (this.byTimeline.size <= TIMELINES_KEPT) break;
      this.byTimeline.delete(timeline);
    }
    return true;
  }

  /** The last barrier of `timeline` (null when none was heard, or for no timeline). */
  of(timeline: string | null): BarrierAnnouncement | null {
    return (timeline !== null && this.byTimeline.get(timeline)) || null;
  }

  /** Each timeline's last barrier, the timeline heard of longest ago first. */
  all(): BarrierAnnouncement[] {
    return [...this.byTimeline.values()];
  }
}

export const GroupMessage = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('heartbeat'),
    group: ScreenSyncGroup,
    member: MemberId,
    /** Lower leads first (a configured lead is 0); ties go to the smaller member id. */
    rank: z.number().int().min(0).max(1000),
    /** Whether the sender may lead: its clock is the group's (a member just started is not, once a group runs). */
    eligible: z.boolean(),
    timeline: TimelineKey.nullable(),
    /** The lead repeats its last barrier, so a member that joins late starts from it. */
    barrier: BarrierAnnouncement.nullable(),
  }),
  z.strictObject({
    type: z.literal('barrier'),
    group: ScreenSyncGroup,
    member: MemberId,
    barrier: BarrierAnnouncement,
  }),
  z.strictObject({ type: z.literal('time.request'), group: ScreenSyncGroup, member: MemberId, id: z.number().int() }),
  z.strictObject({
    type: z.literal('time.answer'),
    group: ScreenSyncGroup,
    member: MemberId,
    to: MemberId,
    id: z.number().int(),
    receivedAt: Instant,
    sentAt: Instant,
  }),
]);
export type GroupMessage = z.infer<typeof GroupMessage>;

/** A broadcast channel of one group: every member receives what any member sends (itself excepted). */
export interface GroupTransport {
  send(message: GroupMessage): void;
  /** Subscribes to raw messages off the network; returns the unsubscribe. */
  onMessage(handler: (raw: unknown) => void): () => void;
}
