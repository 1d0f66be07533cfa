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

/**
 * Whether `barrier` replaces `last` as the group's last barrier: there is none yet, it is of another
 * timeline, or it comes later on the same one (an older or repeated one of that timeline does not).
 */
export function supersedes(barrier: BarrierAnnouncement, last: BarrierAnnouncement | null): boolean {
  return !last || last.timeline !== barrier.timeline || barrier.at > last.at;
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
