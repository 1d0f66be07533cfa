// Accepting an invitation on the dashboard. Claiming the link's token sets the signup cookie and
// says what comes next: a signed-in person accepts; a new person makes a password or passkey (after
// proving an address by a mailed code when the invitation was a link); an address that already has
// a login signs in first. Acceptance is single: the first one wins, and it makes the membership.
import crypto from 'node:crypto';
import type { DashboardSession, InvitationClaim, InvitationNext, SignupEmailVerified } from '../../sdk/contract/people';
import { isoTime } from '../clock';
import { safeEqual, sha256Hex } from '../keys';
import { sendAfterCommit } from '../mail/mailer';
import type { PersonTable } from '../members/members.tables';
import { addMembership, membershipOf, normalizeEmail, personByEmail } from '../members/people';
import { problem } from '../problem';
import type { Services } from '../services';
import type { SignupTable } from '../sign-in/sign-in.tables';
import { completeSignup, liveSignup, startSignup } from '../sign-in/signups';
import type { DashboardPrincipal } from '../sign-in/dashboard.auth';
import { sessionAnswer } from '../sign-in/dashboard-sessions';
import type { Db, Tx, Work } from '../store/store';
import type { InvitationTable } from './invitations.tables';

/** A mailed address code is valid this long (within the signup's own life). */
export const ADDRESS_CODE_TTL_MS = 15 * 60_000;
/** Wrong codes before a code is void (a new one must be asked for). */
export const ADDRESS_CODE_ATTEMPTS = 5;
/** Codes one signup may ask for: bounds the mail one link can make the server send. */
export const ADDRESS_CODES_PER_SIGNUP = 3;

/** The invitation a token names, if it can still be accepted; link_invalid / link_expired otherwise. */
export async function acceptableInvitation(
  tx: Tx,
  by: { token?: string; id?: string },
  now: number,
): Promise<InvitationTable> {
  let q = tx.selectFrom('invitations').selectAll();
  q = by.token !== undefined ? q.where('token_hash', '=', sha256Hex(by.token)) : q.where('id', '=', by.id!);
  const row = await q.executeTakeFirst();
  // Unknown, revoked and replaced tokens look alike: the route is no oracle of invitations.
  if (!row || row.state === 'revoked') throw problem('link_invalid', 'this invitation link is not valid');
  if (row.state === 'accepted') throw problem('invitation_consumed', 'this invitation was accepted already');
  if (now >= row.expires_at) throw problem('link_expired', 'this invitation has expired; ask for a new one');
  const tenant = await tx
    .selectFrom('tenants')
    .select('status')
    .where('id', '=', row.tenant_id)
    .executeTakeFirstOrThrow();
  if (tenant.status !== 'active') throw problem('link_invalid', 'this invitation link is not valid');
  return row;
}

export async function claimInvitation(
  tx: Tx,
  input: { token: string; signedIn: PersonTable | undefined },
  now: number,
): Promise<{ claim: InvitationClaim; cookie: string }> {
  const invitation = await acceptableInvitation(tx, { token: input.token }, now);
  const project = await tx
    .selectFrom('tenants')
    .select('name')
    .where('id', '=', invitation.tenant_id)
    .executeTakeFirstOrThrow();
  let next: InvitationNext;
  if (input.signedIn) next = 'accept';
  else if (invitation.email === null) next = 'verify_email';
  // The token came through this mailbox, so saying whether it has a login tells its owner only.
  else next = (await personByEmail(tx, invitation.email)) ? 'sign_in' : 'create_credential';
  const { row, cookie } = await startSignup(
    tx,
    {
      purpose: 'invitation',
      invitationId: invitation.id,
      email: invitation.email ?? undefined,
      emailVerified: invitation.email !== null,
      endsBy: invitation.expires_at,
    },
    now,
  );
  return {
    claim: {
      invitation: {
        kind: invitation.kind,
        project_name: project.name,
        email: invitation.email,
        expires_at: isoTime(invitation.expires_at),
      },
      next,
      csrf_token: row.csrf_token,
    },
    cookie,
  };
}

/** Makes the person a member through the invitation; the first acceptance wins. */
export async function acceptInvitation(
  services: Services,
  work: Work,
  input: { invitationId: string; person: PersonTable; requestId: string },
  now: number,
): Promise<InvitationTable> {
  const invitation = await acceptableInvitation(work.db, { id: input.invitationId }, now);
  // A member already (a signed-in colleague who opened someone else's link, say) would spend the
  // invitation on a membership that exists: it stays outstanding for the person it was meant for.
  const alreadyMember = () =>
    problem(
      'resource_conflict',
      'you are a member of this project already, so the invitation was left unused (to accept it for someone else, sign out and open its link again)',
    );
  if (await membershipOf(work.db, invitation.tenant_id, input.person.id)) throw alreadyMember();
  const accepted = await work.db
    .updateTable('invitations')
    .set({ state: 'accepted', accepted_at: now, accepted_by: input.person.id })
    .where('id', '=', invitation.id)
    .where('state', '=', 'outstanding')
    .executeTakeFirst();
  if (Number(accepted.numUpdatedRows) !== 1)
    throw problem('invitation_consumed', 'this invitation was accepted already');
  const member = { person_id: input.person.id, display_name: input.person.display_name };
  const joined = await addMembership(
    work.db,
    {
      tenantId: invitation.tenant_id,
      personId: input.person.id,
      kind: invitation.kind,
      advertising: invitation.advertising,
      invitationId: invitation.id,
    },
    now,
  );
  // The membership committed by another acceptance since the look above (two invitations accepted at
  // once): this one is undone, and its invitation stays outstanding.
  if (!joined) throw alreadyMember();
  await services.events.append(
    work,
    {
      type: 'invitation.accepted',
      tenantId: invitation.tenant_id,
      message: `${invitation.kind} invitation accepted`,
      resource: { type: 'invitation', id: invitation.id },
      details: { kind: invitation.kind, member },
      requestId: input.requestId,
    },
    now,
  );
  await services.events.append(
    work,
    {
      type: 'member.joined',
      tenantId: invitation.tenant_id,
      message: `${input.person.display_name} joined the project`,
      resource: { type: 'person', id: input.person.id },
      details: { membership: invitation.kind, member },
      requestId: input.requestId,
    },
    now,
  );
  return invitation;
}

function codeHash(signupId: string, code: string): string {
  return sha256Hex(`${signupId}:${code}`);
}

/** Mails a six-digit code to the address a link invitation's person gives. */
export async function sendAddressCode(
  services: Services,
  work: Work,
  signup: SignupTable,
  address: string,
  now: number,
): Promise<{ expiresAt: number }> {
  if (signup.purpose !== 'invitation' || signup.email_verified === 1)
    throw problem('resource_conflict', 'this signup has its address already');
  const email = normalizeEmail(address);
  const code = String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
  const expiresAt = Math.min(now + ADDRESS_CODE_TTL_MS, signup.expires_at);
  // The count is spent in the statement that checks it: the signup was read before this transaction
  // (its cookie), and requests arriving together would all have seen the same count.
  const sent = await work.db
    .updateTable('signups')
    .set((eb) => ({
      email,
      code_hash: codeHash(signup.id, code),
      code_expires_at: expiresAt,
      code_attempts: 0,
      codes_sent: eb('codes_sent', '+', 1),
    }))
    .where('id', '=', signup.id)
    .where('codes_sent', '<', ADDRESS_CODES_PER_SIGNUP)
    .where('email_verified', '=', 0)
    .executeTakeFirst();
  if (Number(sent.numUpdatedRows) !== 1) {
    const current = await work.db
      .selectFrom('signups')
      .select('email_verified')
      .where('id', '=', signup.id)
      .executeTakeFirst();
    if (current?.email_verified === 1) throw problem('resource_conflict', 'this signup has its address already');
    throw problem('rate_limited', 'no more codes for this signup; open the invitation link again', { retryAfter: 60 });
  }
  sendAfterCommit(work, services, {
    to: email,
    kind: 'address_verification',
    subject: `Your Marquee code: ${code}`,
    text: [
      `Your code to confirm this address on Marquee is ${code}.`,
      '',
      `It is valid until ${isoTime(expiresAt)}. If you did not ask for it, ignore this mail.`,
    ].join('\n'),
  });
  return { expiresAt };
}

/**
 * Checks a mailed code. Each try spends one of the code's attempts first, in its own statement, so
 * a wrong code counts although the request then fails.
 */
export async function verifyAddressCode(
  db: Db,
  signup: SignupTable,
  code: string,
  now: number,
): Promise<SignupEmailVerified> {
  if (signup.purpose !== 'invitation' || signup.email === null || signup.code_hash === null)
    throw problem('resource_conflict', 'ask for a code first');
  if (signup.email_verified === 1) throw problem('resource_conflict', 'this address is confirmed already');
  const spent = await db
    .updateTable('signups')
    .set((eb) => ({ code_attempts: eb('code_attempts', '+', 1) }))
    .where('id', '=', signup.id)
    .where('code_attempts', '<', ADDRESS_CODE_ATTEMPTS)
    .where('code_expires_at', '>', now)
    .executeTakeFirst();
  if (Number(spent.numUpdatedRows) !== 1)
    throw problem('link_expired', 'this code has expired or was tried too often; ask for a new one');
  if (!safeEqual(codeHash(signup.id, code), signup.code_hash)) {
    throw problem('invalid_request', 'code: this is not the code we mailed', {
      errors: [{ field: 'code', code: 'mismatch', detail: 'check the mail and try again' }],
    });
  }
  await db
    .updateTable('signups')
    .set({ email_verified: 1, code_hash: null, code_expires_at: null })
    .where('id', '=', signup.id)
    .where('code_hash', '=', signup.code_hash)
    .execute();
  const existing = await personByEmail(db, signup.email);
  return { email: signup.email, next: existing ? 'sign_in' : 'create_credential' };
}

/**
 * A signed-in person accepts the invitation the signup cookie of this browser holds; the session
 * then selects that project. The answer is the session as it now is.
 */
export async function acceptWithSession(
  services: Services,
  work: Work,
  input: { signupToken: string | undefined; principal: DashboardPrincipal; requestId: string },
  now: number,
): Promise<DashboardSession> {
  const signup = input.signupToken ? await liveSignup(work.db, input.signupToken, now) : undefined;
  if (signup?.purpose !== 'invitation' || signup.invitation_id === null)
    throw problem('unauthorized', 'open the invitation link first: accepting needs its signup cookie');
  const { person, session } = input.principal;
  const invitation = await acceptInvitation(
    services,
    work,
    { invitationId: signup.invitation_id, person, requestId: input.requestId },
    now,
  );
  await completeSignup(work.db, signup.id, now);
  await work.db
    .updateTable('dashboard_sessions')
    .set({ tenant_id: invitation.tenant_id })
    .where('id', '=', session.id)
    .execute();
  return sessionAnswer(work.db, { row: { ...session, tenant_id: invitation.tenant_id }, cookie: '' }, person);
}
