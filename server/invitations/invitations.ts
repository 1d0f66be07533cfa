// Invitations of people to a project (Model P): made by an agent (POST /api/v1/invitations), sent
// by email or handed over as a link, revoked while outstanding. An outstanding email invitation of
// the same kind, address and project is reused: sent again with a fresh link (the earlier link
// stops working) and its expiry unchanged. Tokens are 256 random bits; only their hash is stored.
import type {
  DashboardLink,
  Invitation,
  InvitationAdvertising,
  InvitationCreated,
  InvitationKind,
  InvitationList,
  InvitationListQuery,
} from '../../sdk/contract/people';
import { INVITATION_PAGE_SIZE } from '../../sdk/contract/people';
import { isoTime } from '../clock';
import { newId, randomToken, sha256Hex } from '../keys';
import { sendAfterCommit, type OutgoingMail } from '../mail/mailer';
import { normalizeEmail } from '../members/people';
import { problem } from '../problem';
import type { Services } from '../services';
import { expectUpdated, type Db, type Tx, type Work } from '../store/store';
import type { InvitationTable } from './invitations.tables';
import { newestFirstPage } from '../keyset-cursor';

/** spec Limits: email invitation seven days. */
export const INVITATION_EMAIL_TTL_MS = 7 * 24 * 3600_000;
/** spec Limits: member link 24 hours. */
export const INVITATION_LINK_TTL_MS = 24 * 3600_000;

/**
 * A dashboard link (POST /api/v1/account/dashboard-links): a member link invitation an agent hands
 * to the person at its side, single use, alive ten minutes (the hosted peer's DashboardLinkTTL).
 */
export const DASHBOARD_LINK_TTL_MS = 10 * 60_000;

/** The dashboard link's URL: exactly the dashboard origin's `/` and the token in the fragment. */
export function dashboardLinkUrl(dashboardOrigin: string, token: string): string {
  return `${dashboardOrigin}/#link=${token}`;
}

/** The link a person opens: the token rides the fragment, so no server log or Referer sees it. */
export function invitationUrl(dashboardOrigin: string, token: string): string {
  return `${dashboardOrigin}/#invite=${token}`;
}

export function invitationStatus(row: InvitationTable, now: number): Invitation['status'] {
  return row.state === 'outstanding' && now >= row.expires_at ? 'expired' : row.state;
}

export function invitationView(row: InvitationTable, now: number): Invitation {
  return {
    id: row.id,
    kind: row.kind,
    delivery: row.delivery,
    email: row.email,
    status: invitationStatus(row, now),
    created_at: isoTime(row.created_at),
    expires_at: isoTime(row.expires_at),
    accepted_at: row.accepted_at === null ? null : isoTime(row.accepted_at),
    revoked_at: row.revoked_at === null ? null : isoTime(row.revoked_at),
    ...(row.advertising ? { advertising: JSON.parse(row.advertising) as InvitationAdvertising } : {}),
  };
}

export interface CreateInvitations {
  tenantId: string;
  kind: InvitationKind;
  delivery: 'email' | 'link';
  emails?: string[];
  advertising?: InvitationAdvertising;
  requestId: string;
}

/** The seller-owned scope may name only screens of this project (another's are not_found). */
async function checkAdvertisingScope(
  tx: Tx,
  tenantId: string,
  scope: InvitationAdvertising | undefined,
): Promise<void> {
  if (!scope?.screens) return;
  const found = await tx
    .selectFrom('screens')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('state', '!=', 'deleted')
    .where('id', 'in', scope.screens)
    .execute();
  if (found.length !== scope.screens.length) {
    const known = new Set(found.map((r) => r.id));
    const missing = scope.screens.find((id) => !known.has(id))!;
    throw problem('not_found', `advertising.screens: screen ${missing} not found`);
  }
}

export async function createInvitations(
  services: Services,
  work: Work,
  input: CreateInvitations,
  now: number,
): Promise<InvitationCreated> {
  const tx = work.db;
  await checkAdvertisingScope(tx, input.tenantId, input.advertising);
  const project = await tx
    .selectFrom('tenants')
    .select('name')
    .where('id', '=', input.tenantId)
    .executeTakeFirstOrThrow();
  const advertising = input.advertising ? JSON.stringify(input.advertising) : null;
  const items: InvitationCreated['items'] = [];
  if (input.delivery === 'link') {
    const token = randomToken(32);
    const row = await insertInvitation(tx, { ...input, email: null, advertising, token }, now);
    await recordInvitationCreated(services, work, row, { reused: false, requestId: input.requestId }, now);
    items.push({ ...invitationView(row, now), reused: false });
    return { items, link_url: invitationUrl(services.config.dashboardOrigin, token) };
  }
  // A member is not mailed an invitation it could only be refused (acceptance needs a non-member).
  const members = new Set(
    (
      await tx
        .selectFrom('memberships')
        .innerJoin('people', 'people.id', 'memberships.person_id')
        .select('people.email')
        .where('memberships.tenant_id', '=', input.tenantId)
        .execute()
    ).map((m) => normalizeEmail(m.email)),
  );
  const alreadyMembers: string[] = [];
  for (const address of input.emails ?? []) {
    const email = normalizeEmail(address);
    if (members.has(email)) {
      alreadyMembers.push(address);
      continue;
    }
    const { row, token, reused } = await issueEmailInvitation(work, { ...input, email, advertising }, now);
    await recordInvitationCreated(services, work, row, { reused, requestId: input.requestId }, now);
    sendAfterCommit(work, services, invitationMail(services.config.dashboardOrigin, project.name, row, token));
    items.push({ ...invitationView(row, now), reused });
  }
  return { items, ...(alreadyMembers.length > 0 ? { already_members: alreadyMembers } : {}) };
}

async function insertInvitation(
  tx: Tx,
  input: {
    tenantId: string;
    kind: InvitationKind;
    delivery: 'email' | 'link';
    email: string | null;
    advertising: string | null;
    token: string;
    /** A lifetime shorter than the delivery's own (a dashboard link's ten minutes). */
    ttlMs?: number;
  },
  now: number,
): Promise<InvitationTable> {
  const row: InvitationTable = {
    id: newId('inv'),
    tenant_id: input.tenantId,
    kind: input.kind,
    delivery: input.delivery,
    email: input.email,
    token_hash: sha256Hex(input.token),
    state: 'outstanding',
    advertising: input.advertising,
    created_at: now,
    expires_at: now + (input.ttlMs ?? (input.delivery === 'email' ? INVITATION_EMAIL_TTL_MS : INVITATION_LINK_TTL_MS)),
    accepted_at: null,
    accepted_by: null,
    revoked_at: null,
  };
  await tx.insertInto('invitations').values(row).execute();
  return row;
}

/**
 * Mints a dashboard link: a project_member link invitation of ten minutes. Claiming and accepting
 * it is the link invitation's flow (the visitor signs in, or proves an address and makes a login).
 */
export async function createDashboardLink(
  services: Services,
  work: Work,
  input: { tenantId: string; requestId: string },
  now: number,
): Promise<DashboardLink> {
  const token = randomToken(32);
  const row = await insertInvitation(
    work.db,
    {
      tenantId: input.tenantId,
      kind: 'project_member',
      delivery: 'link',
      email: null,
      advertising: null,
      token,
      ttlMs: DASHBOARD_LINK_TTL_MS,
    },
    now,
  );
  await recordInvitationCreated(
    services,
    work,
    row,
    { reused: false, requestId: input.requestId, dashboardLink: true },
    now,
  );
  return { url: dashboardLinkUrl(services.config.dashboardOrigin, token), expires_at: isoTime(row.expires_at) };
}

/**
 * Whether a recorded dashboard link may be handed to an exact retry: only while it can still be
 * claimed (D-221). An expired one (its recorded body is erased then) is link_expired; one already
 * accepted, or revoked, would only mislead the person it is handed to.
 */
export async function checkDashboardLinkReplay(db: Db, recorded: unknown, now: number): Promise<void> {
  const body = recorded as { url?: string; expires_at?: string } | undefined;
  const expiresAt = Date.parse(body?.expires_at ?? '');
  if (!(now < expiresAt))
    throw problem('link_expired', 'this dashboard link has expired; ask for a new one with a new Idempotency-Key');
  const token = new URLSearchParams(new URL(body!.url!).hash.slice(1)).get('link') ?? '';
  const row = await db
    .selectFrom('invitations')
    .select('state')
    .where('token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (row?.state === 'accepted')
    throw problem(
      'invitation_consumed',
      'this dashboard link was used already; ask for a new one with a new Idempotency-Key',
    );
  if (row?.state !== 'outstanding')
    throw problem('link_invalid', 'this dashboard link was revoked; ask for a new one with a new Idempotency-Key');
}

/**
 * An email invitation to `email`: the outstanding one of the same kind and project with a fresh
 * token (reused), or a new one. An ad buyer's reuse also takes the scope this request names.
 */
export async function issueEmailInvitation(
  work: Work,
  input: { tenantId: string; kind: InvitationKind; email: string; advertising: string | null },
  now: number,
): Promise<{ row: InvitationTable; token: string; reused: boolean }> {
  const tx = work.db;
  const token = randomToken(32);
  // The outstanding invitation is looked for, then one is inserted: one issue per project at a time
  // where transactions run side by side, or requests arriving together would each insert their own.
  await work.lock(`invitations:${input.tenantId}`);
  const outstanding = await tx
    .selectFrom('invitations')
    .selectAll()
    .where('tenant_id', '=', input.tenantId)
    .where('kind', '=', input.kind)
    .where('email', '=', input.email)
    .where('delivery', '=', 'email')
    .where('state', '=', 'outstanding')
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  if (outstanding) {
    const row = { ...outstanding, token_hash: sha256Hex(token), advertising: input.advertising };
    await tx
      .updateTable('invitations')
      .set({ token_hash: row.token_hash, advertising: row.advertising })
      .where('id', '=', row.id)
      .execute();
    return { row, token, reused: true };
  }
  const row = await insertInvitation(tx, { ...input, delivery: 'email', token }, now);
  return { row, token, reused: false };
}

/**
 * The one writer of `invitation.created`: for a member's request, and for the contact-address rule
 * (a sign-in reset request reissuing a member invitation, which has no request id of its own).
 */
export async function recordInvitationCreated(
  services: Services,
  work: Work,
  row: InvitationTable,
  how: { reused: boolean; requestId?: string; contactAddress?: boolean; dashboardLink?: boolean },
  now: number,
): Promise<void> {
  const sent = how.contactAddress ? 'member invitation sent' : `${row.kind} invitation`;
  const message = how.dashboardLink
    ? 'dashboard link created'
    : how.contactAddress
      ? `${sent}${how.reused ? ' again' : ''} to the contact address`
      : how.reused
        ? `${sent} sent again`
        : `${sent} created`;
  await services.events.append(
    work,
    {
      type: 'invitation.created',
      tenantId: row.tenant_id,
      message,
      resource: { type: 'invitation', id: row.id },
      details: { kind: row.kind, delivery: row.delivery, reused: how.reused },
      requestId: how.requestId,
    },
    now,
  );
}

export function invitationMail(
  dashboardOrigin: string,
  projectName: string,
  row: Pick<InvitationTable, 'email' | 'kind' | 'expires_at'>,
  token: string,
): OutgoingMail {
  const role = row.kind === 'ad_buyer' ? 'an advertiser' : 'a member';
  return {
    to: row.email!,
    kind: 'invitation',
    subject: `You are invited to "${projectName}" on Marquee`,
    text: [
      `You are invited to join the digital-signage project "${projectName}" on Marquee as ${role}.`,
      '',
      'Open this link to accept (it works once, until the date below):',
      '',
      invitationUrl(dashboardOrigin, token),
      '',
      `The invitation expires at ${isoTime(row.expires_at)}.`,
      'If you did not expect it, ignore this mail: nothing happens unless the link is opened.',
    ].join('\n'),
  };
}

// ---- Listing: newest first by (created_at, id).

export async function listInvitations(
  db: Db,
  tenantId: string,
  query: InvitationListQuery,
  now: number,
): Promise<InvitationList> {
  let q = db.selectFrom('invitations').selectAll().where('tenant_id', '=', tenantId);
  if (query.kind) q = q.where('kind', '=', query.kind);
  switch (query.status) {
    case 'outstanding':
      q = q.where('state', '=', 'outstanding').where('expires_at', '>', now);
      break;
    case 'expired':
      q = q.where('state', '=', 'outstanding').where('expires_at', '<=', now);
      break;
    case 'accepted':
    case 'revoked':
      q = q.where('state', '=', query.status);
      break;
  }
  const { rows: page, next_cursor } = await newestFirstPage(q, query.cursor, INVITATION_PAGE_SIZE);
  return {
    items: page.map((row) => invitationView(row, now)),
    next_cursor,
  };
}

/**
 * Revokes an outstanding invitation (an expired one too: harmless); revoking a revoked one changes
 * nothing; an accepted one is invitation_consumed. Another project's id is not_found.
 */
export async function revokeInvitation(
  services: Services,
  work: Work,
  input: { tenantId: string; id: string; requestId: string },
  now: number,
): Promise<void> {
  const row = await work.db
    .selectFrom('invitations')
    .selectAll()
    .where('id', '=', input.id)
    .where('tenant_id', '=', input.tenantId)
    .executeTakeFirst();
  if (!row) throw problem('not_found', 'invitation not found');
  if (row.state === 'accepted')
    throw problem('invitation_consumed', 'this invitation was accepted; the member it made stays');
  if (row.state === 'revoked') return;
  const revoked = await work.db
    .updateTable('invitations')
    .set({ state: 'revoked', revoked_at: now })
    .where('id', '=', row.id)
    .where('state', '=', 'outstanding')
    .executeTakeFirst();
  // Accepted or revoked since the read: the revoke runs again and answers what it finds.
  expectUpdated(revoked, 'invitation');
  await services.events.append(
    work,
    {
      type: 'invitation.revoked',
      tenantId: row.tenant_id,
      message: `${row.kind} invitation revoked`,
      resource: { type: 'invitation', id: row.id },
      details: { kind: row.kind, delivery: row.delivery },
      requestId: input.requestId,
    },
    now,
  );
}
