// People and their access (Model P): invitations, sign-in resets, and the dashboard's own routes
// (`/dashboard/v1/*` on the dashboard origin: sessions, passkeys, signup, members). Request schemas
// and answer shapes, shared by the server, the dashboard and integrators.
import { z } from 'zod';
import { FLEET_SELECTION_MAX } from './limits';
import { Email } from './tenants';

export const INVITATION_KINDS = ['project_member', 'ad_buyer'] as const;
export type InvitationKind = (typeof INVITATION_KINDS)[number];
export const INVITATION_DELIVERIES = ['email', 'link'] as const;
export type InvitationDelivery = (typeof INVITATION_DELIVERIES)[number];
export const INVITATION_STATES = ['outstanding', 'accepted', 'revoked', 'expired'] as const;
export type InvitationState = (typeof INVITATION_STATES)[number];

/** Addresses one request may invite (each gets its own invitation and mail). */
export const INVITATION_EMAILS_MAX = 20;
/** Invitations a page of GET /api/v1/invitations holds. */
export const INVITATION_PAGE_SIZE = 50;

/** A 256-bit single-use token, unpadded base64url: invitation links, reset links. */
export const LinkToken = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the 43-character token from the link');

const ScreenRef = z.string().regex(/^scr_[A-Za-z0-9_-]{1,64}$/, 'must be a screen id (scr_…)');
const SlotRef = z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'must be a slot id');
const uniqueList = <T extends z.ZodType<string>>(item: T) =>
  z
    .array(item)
    .min(1)
    .max(FLEET_SELECTION_MAX)
    .refine((list) => new Set(list).size === list.length, 'must not repeat an entry');

/** spec InvitationAdvertising: the seller-owned scope of an ad buyer: screens, slots, or both. */
export const InvitationAdvertising = z
  .strictObject({ screens: uniqueList(ScreenRef).optional(), slots: uniqueList(SlotRef).optional() })
  .refine((a) => a.screens !== undefined || a.slots !== undefined, 'needs at least one screen or slot');
export type InvitationAdvertising = z.infer<typeof InvitationAdvertising>;

/** spec InvitationCreate. */
export const InvitationCreate = z
  .strictObject({
    kind: z.enum(INVITATION_KINDS),
    delivery: z.enum(INVITATION_DELIVERIES).default('email'),
    emails: z.array(Email).min(1).max(INVITATION_EMAILS_MAX).optional(),
    advertising: InvitationAdvertising.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.delivery === 'email' && v.emails === undefined)
      ctx.addIssue({ code: 'custom', path: ['emails'], message: 'is required when delivery is email' });
    if (v.delivery === 'link' && v.emails !== undefined)
      ctx.addIssue({ code: 'custom', path: ['emails'], message: 'must be absent when delivery is link' });
    if (v.emails && new Set(v.emails.map((e) => e.toLowerCase())).size !== v.emails.length)
      ctx.addIssue({ code: 'custom', path: ['emails'], message: 'must not repeat an address' });
    if (v.kind === 'ad_buyer' && v.advertising === undefined)
      ctx.addIssue({ code: 'custom', path: ['advertising'], message: 'is required for an ad_buyer invitation' });
    if (v.kind === 'project_member' && v.advertising !== undefined)
      ctx.addIssue({ code: 'custom', path: ['advertising'], message: 'is only for ad_buyer invitations' });
  });
export type InvitationCreate = z.input<typeof InvitationCreate>;

export const InvitationListQuery = z.strictObject({
  kind: z.enum(INVITATION_KINDS).optional(),
  status: z.enum(INVITATION_STATES).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export type InvitationListQuery = z.infer<typeof InvitationListQuery>;

export interface Invitation {
  id: string;
  kind: InvitationKind;
  delivery: InvitationDelivery;
  /** The invited address (email delivery); null for a link. */
  email: string | null;
  status: InvitationState;
  created_at: string;
  /** Seven days after creation for email, 24 hours for a link. */
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
  advertising?: InvitationAdvertising;
}

export interface InvitationCreated {
  /**
   * One per address (email) or the one link invitation. `reused` is true where an outstanding
   * invitation of the same kind and address was sent again instead of a new one being made.
   */
  items: (Invitation & { reused: boolean })[];
  /**
   * Link delivery only: the URL to hand to the person, shown once. It is a credential: its token
   * rides the fragment (`<dashboard>/#invite=<token>`), so no server log or Referer sees it.
   */
  link_url?: string;
  /**
   * Email delivery only: the addresses (as given) that belong to members of the project already.
   * They are not invited (accepting would be refused) and have no item.
   */
  already_members?: string[];
}

/**
 * POST /api/v1/account/dashboard-links: a single-use sign-in link for the person beside an agent,
 * `<dashboard>/#link=<token>`, alive ten minutes. It is a credential; the dashboard strips the
 * fragment before any request and claims it at POST /dashboard/v1/links/claim.
 */
export interface DashboardLink {
  url: string;
  expires_at: string;
}

export interface InvitationList {
  items: Invitation[];
  /** Pass as `cursor` for the next page; null on the last. */
  next_cursor: string | null;
}

/** spec SignInResetRequest. */
export const SignInResetRequest = z.strictObject({ email: Email });
export type SignInResetRequest = z.infer<typeof SignInResetRequest>;

/** The same answer whether or not the address has a login (spec Authentication rule 5). */
export interface SignInResetAccepted {
  status: 'accepted';
  /** How long a link the mail may carry stays valid. */
  expires_in_seconds: number;
}

// ---- Dashboard (`/dashboard/v1/*` on the dashboard origin)

/** The header every cookie-authenticated dashboard mutation sends, with the session's csrf_token. */
export const CSRF_HEADER = 'Marquee-CSRF-Token';

/** A name a person gives themself: trimmed, 1 to 80 characters, no control characters. Never authority. */
export const DisplayName = z
  .string()
  .transform((s) => s.trim())
  .pipe(
    z
      .string()
      .min(1)
      .max(80)
      .refine((s) => !/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(s), 'must not contain control characters'),
  );

export const DashboardSignIn = z.strictObject({ email: Email, password: z.string().min(1).max(1024) });
export type DashboardSignIn = z.infer<typeof DashboardSignIn>;

export type SignInMethod = 'password' | 'passkey' | 'signup' | 'reset';

export interface DashboardProjectRef {
  id: string;
  name: string;
  membership: InvitationKind;
}

export interface DashboardSession {
  person_id: string;
  display_name: string;
  email: string;
  /** The selected project; null for a person who belongs to none. */
  project: DashboardProjectRef | null;
  /** Send as Marquee-CSRF-Token on every mutation of this session. */
  csrf_token: string;
  method: SignInMethod;
  created_at: string;
  /** Absolute end of the session. */
  expires_at: string;
  /** The session ends here unless a request comes first (idle expiry). */
  idle_expires_at: string;
}

export const DashboardProjectSelect = z.strictObject({ project_id: z.string().min(1).max(100) });

export interface DashboardProjectList {
  items: (DashboardProjectRef & { selected: boolean })[];
}

export interface DashboardMember {
  person_id: string;
  display_name: string;
  email: string;
  membership: InvitationKind;
  joined_at: string;
  password: boolean;
  passkeys: number;
}

export interface DashboardMemberList {
  items: DashboardMember[];
}

export interface DashboardSessionSummary {
  id: string;
  method: SignInMethod;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  current: boolean;
}

export interface DashboardSessionList {
  items: DashboardSessionSummary[];
}

export const InvitationClaimRequest = z.strictObject({ token: LinkToken });

/** What a person holding an invitation does next. */
export type InvitationNext = 'verify_email' | 'create_credential' | 'sign_in' | 'accept';

export interface InvitationClaim {
  invitation: { kind: InvitationKind; project_name: string; email: string | null; expires_at: string };
  next: InvitationNext;
  /** Send as Marquee-CSRF-Token on the signup's mutations. */
  csrf_token: string;
}

export const SignupEmail = z.strictObject({ email: Email });
/** The code mailed to the address a link invitation's person gives. */
export const SignupEmailVerify = z.strictObject({ code: z.string().regex(/^[0-9]{6}$/, 'must be the six-digit code') });

export interface SignupEmailVerified {
  email: string;
  /** sign_in when the address already has a login: sign in, then accept. */
  next: 'create_credential' | 'sign_in';
}

export const SignupPassword = z.strictObject({ display_name: DisplayName, password: z.string().max(1024) });
export const ResetClaimRequest = z.strictObject({ token: LinkToken });

export interface ResetClaim {
  email: string;
  next: 'create_credential';
  csrf_token: string;
  expires_at: string;
}

export const ResetPassword = z.strictObject({ password: z.string().max(1024) });

export const PasskeyRegistrationStart = z.strictObject({ display_name: DisplayName.optional() });
export const PasskeyCeremonyComplete = z.strictObject({
  ceremony_id: z.string().min(1).max(100),
  credential: z.record(z.string(), z.unknown()),
});

export interface PasskeyRegistration {
  ceremony_id: string;
  /** PublicKeyCredentialCreationOptionsJSON, for navigator.credentials.create. */
  creation_options: Record<string, unknown>;
}

export interface PasskeyAssertion {
  ceremony_id: string;
  /** PublicKeyCredentialRequestOptionsJSON (no allowCredentials), for navigator.credentials.get. */
  request_options: Record<string, unknown>;
}

export interface DashboardBalance {
  credit_remaining: number;
  credit_included: number;
  credit_reset: string;
}
