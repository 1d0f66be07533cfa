// Sign-in resets (spec Authentication rule 5): mailbox-only, one hour, single completion. A request
// answers the same whatever the address (the mail, if any, goes out after the reply's commit); the
// mail carries a reset link when the address has a login, and invitations to the projects enrolled
// with the address that nobody has joined (the contact-address rule). Completing a reset replaces
// the person's sign-in credentials (the password and every passkey) with the one just made, and
// revokes every other session of theirs.
import type { ResetClaim } from '../../sdk/contract/people';
import { isoTime } from '../clock';
import { reissueForContactAddress } from '../invitations/contact-address';
import { invitationUrl, recordInvitationCreated } from '../invitations/invitations';
import { newId, randomToken, sha256Hex } from '../keys';
import { sendAfterCommit } from '../mail/mailer';
import type { PersonTable } from '../members/members.tables';
import { normalizeEmail, personByEmail } from '../members/people';
import { storePasskey, type VerifiedRegistration } from '../members/passkeys';
import { problem } from '../problem';
import type { Services } from '../services';
import type { Tx, Work } from '../store/store';
import { revokeSessionsOf, startSession, type StartedSession } from './dashboard-sessions';
import type { SignupTable } from './sign-in.tables';
import { completeSignup, startSignup } from './signups';

/** spec Limits: sign-in reset one hour. */
export const SIGN_IN_RESET_TTL_MS = 3600_000;

export function resetUrl(dashboardOrigin: string, token: string): string {
  return `${dashboardOrigin}/#reset=${token}`;
}

/** Issues what the address's mailbox may have, and mails it after commit; says nothing about it. */
export async function requestReset(
  services: Services,
  work: Work,
  input: { email: string },
  now: number,
): Promise<void> {
  const email = normalizeEmail(input.email);
  const origin = services.config.dashboardOrigin;
  const lines: string[] = [];
  const person = await personByEmail(work.db, email);
  if (person) {
    const token = randomToken(32);
    // A newer reset replaces the older: only the latest link works. One request per person at a
    // time where transactions run side by side, or two would each leave their own link outstanding.
    await work.lock(`sign-in-resets:${person.id}`);
    await work.db
      .updateTable('sign_in_resets')
      .set({ state: 'superseded' })
      .where('person_id', '=', person.id)
      .where('state', '=', 'outstanding')
      .execute();
    await work.db
      .insertInto('sign_in_resets')
      .values({
        id: newId('rst'),
        person_id: person.id,
        token_hash: sha256Hex(token),
        state: 'outstanding',
        created_at: now,
        expires_at: now + SIGN_IN_RESET_TTL_MS,
        claimed_at: null,
        completed_at: null,
      })
      .execute();
    lines.push(
      'To sign in again, open this link and make a new password or passkey. It replaces your old',
      'ones and signs you out everywhere else. It works once, for one hour:',
      '',
      resetUrl(origin, token),
      '',
    );
  }
  const reissued = await reissueForContactAddress(work, email, now);
  if (reissued.length > 0) {
    lines.push('Projects an agent enrolled with this address, which nobody has joined yet:', '');
    for (const r of reissued) {
      lines.push(`- "${r.projectName}" (until ${isoTime(r.row.expires_at)}): ${invitationUrl(origin, r.token)}`);
      await recordInvitationCreated(services, work, r.row, { reused: r.reused, contactAddress: true }, now);
    }
    lines.push('');
  }
  if (lines.length === 0) return;
  sendAfterCommit(work, services, {
    to: email,
    kind: 'sign_in_reset',
    subject: 'Signing in to Marquee',
    text: [
      'Someone (we hope you) asked to sign in to Marquee with this address.',
      '',
      ...lines,
      'If you did not ask, ignore this mail: nothing changes unless a link is opened.',
    ].join('\n'),
  });
}

async function liveReset(tx: Tx, by: { token?: string; id?: string }, now: number) {
  let q = tx.selectFrom('sign_in_resets').selectAll();
  q = by.token !== undefined ? q.where('token_hash', '=', sha256Hex(by.token)) : q.where('id', '=', by.id!);
  const row = await q.executeTakeFirst();
  if (!row || row.state === 'superseded' || row.state === 'completed')
    throw problem('link_invalid', 'this sign-in link is not valid; ask for a new one');
  if (now >= row.expires_at) throw problem('link_expired', 'this sign-in link has expired; ask for a new one');
  return row;
}

/** Opens the reset: the signup cookie (purpose reset) until the reset's hour ends. */
export async function claimReset(tx: Tx, token: string, now: number): Promise<{ claim: ResetClaim; cookie: string }> {
  const reset = await liveReset(tx, { token }, now);
  const person = await tx.selectFrom('people').selectAll().where('id', '=', reset.person_id).executeTakeFirstOrThrow();
  await tx.updateTable('sign_in_resets').set({ claimed_at: now }).where('id', '=', reset.id).execute();
  const { row, cookie } = await startSignup(
    tx,
    {
      purpose: 'reset',
      resetId: reset.id,
      personId: person.id,
      email: person.email,
      emailVerified: true,
      endsBy: reset.expires_at,
    },
    now,
  );
  return {
    claim: {
      email: person.email,
      next: 'create_credential',
      csrf_token: row.csrf_token,
      expires_at: isoTime(row.expires_at),
    },
    cookie,
  };
}

/** A new sign-in credential: a password hash, or a verified passkey with the user handle it was made for. */
export type NewSignInCredential =
  | { passwordHash: string }
  | { passkey: VerifiedRegistration['passkey']; userHandle: string };

/** Replaces the person's credentials with `credential`, revokes their sessions, and signs this browser in. */
export async function completeReset(
  services: Services,
  work: Work,
  input: { signup: SignupTable; credential: NewSignInCredential; requestId: string },
  now: number,
): Promise<{ person: PersonTable; session: StartedSession }> {
  const { signup } = input;
  if (signup.purpose !== 'reset' || signup.reset_id === null || signup.person_id === null)
    throw problem('forbidden', 'this signup is not a sign-in reset');
  const reset = await liveReset(work.db, { id: signup.reset_id }, now);
  const done = await work.db
    .updateTable('sign_in_resets')
    .set({ state: 'completed', completed_at: now })
    .where('id', '=', reset.id)
    .where('state', '=', 'outstanding')
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) !== 1 || !(await completeSignup(work.db, signup.id, now)))
    throw problem('link_invalid', 'this sign-in link was used already');
  const personId = signup.person_id;
  await work.db.deleteFrom('passkeys').where('person_id', '=', personId).execute();
  await work.db
    .updateTable('people')
    .set({ password_hash: 'passwordHash' in input.credential ? input.credential.passwordHash : null, updated_at: now })
    .where('id', '=', personId)
    .execute();
  if ('passkey' in input.credential) await storePasskey(work.db, personId, input.credential.passkey, now);
  await revokeSessionsOf(work.db, personId, now);
  const person = await work.db.selectFrom('people').selectAll().where('id', '=', personId).executeTakeFirstOrThrow();
  const session = await startSession(work.db, { personId, method: 'reset' }, now);
  const member = { person_id: person.id, display_name: person.display_name };
  const tenants = await work.db
    .selectFrom('memberships')
    .select('tenant_id')
    .where('person_id', '=', personId)
    .execute();
  for (const { tenant_id } of tenants) {
    await services.events.append(
      work,
      {
        type: 'member.credentials_reset',
        tenantId: tenant_id,
        message: `${person.display_name} replaced their sign-in credentials through a sign-in reset`,
        resource: { type: 'person', id: person.id },
        details: { member },
        requestId: input.requestId,
      },
      now,
    );
  }
  return { person, session };
}
