// The durable events of people and access (issue 18), each as an entry of the shape the event
// catalog takes (whether a screen's runtime stream carries it, and the schema of its details), so
// that joining the catalog is one line per type. The server writes exactly these details.
import { z } from 'zod';
import { CAPABILITY_AREAS } from './tenants';
import { INVITATION_DELIVERIES, INVITATION_KINDS } from './people';

const prefixed = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9_-]+$`));
const Areas = z.array(z.enum(CAPABILITY_AREAS));
/** Who did it from the dashboard: descriptive, never authority. */
const Member = z.strictObject({ person_id: prefixed('usr'), display_name: z.string().min(1) });

const entry = <D extends z.ZodType>(details: D) => ({ runtime: false as const, details });

export const ACCESS_EVENT_TYPES = {
  'invitation.created': entry(
    z.strictObject({ kind: z.enum(INVITATION_KINDS), delivery: z.enum(INVITATION_DELIVERIES), reused: z.boolean() }),
  ),
  'invitation.revoked': entry(
    z.strictObject({ kind: z.enum(INVITATION_KINDS), delivery: z.enum(INVITATION_DELIVERIES) }),
  ),
  'invitation.accepted': entry(z.strictObject({ kind: z.enum(INVITATION_KINDS), member: Member })),
  'member.joined': entry(z.strictObject({ membership: z.enum(INVITATION_KINDS), member: Member })),
  'member.credentials_reset': entry(z.strictObject({ member: Member })),
  'agent.connection_approved': entry(
    z.strictObject({
      connection_id: prefixed('agc'),
      agent_id: prefixed('agt'),
      capabilities: Areas,
      approved_by: Member,
    }),
  ),
  'agent.activated': entry(
    z.strictObject({ name: z.string().min(1), agent_type: z.string().min(1), capabilities: Areas }),
  ),
  'agent.disconnected': entry(z.strictObject({ name: z.string().min(1), allow_last_agent: z.boolean() })),
  'account.suspended': entry(z.strictObject({ reason: z.string().nullable() })),
  'account.resumed': entry(z.undefined()),
  'project.plan_changed': entry(z.strictObject({ plan: z.string().min(1), previous_plan: z.string().min(1) })),
  'billing.credits_granted': entry(
    z.strictObject({ credits: z.number().int().min(1), reason: z.string().min(1), operator_id: prefixed('opr') }),
  ),
} as const;

export type AccessEventType = keyof typeof ACCESS_EVENT_TYPES;
export type AccessEventDetails<T extends AccessEventType> = z.infer<(typeof ACCESS_EVENT_TYPES)[T]['details']>;
