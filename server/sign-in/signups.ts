// The signup cookie's rows: a person accepting an invitation (verifying an address when the
// invitation was a link, then making a password or passkey), or finishing a sign-in reset. A row
// lives SIGNUP_TTL_MS, never past the invitation or reset it serves, and is completed once.
import { randomToken, newId, sha256Hex } from '../keys';
import type { Db, Tx } from '../store/store';
import { newCookieToken, setDashboardCookie, SIGNUP_COOKIE, SIGNUP_TTL_MS } from './dashboard-cookies';
import type { SignupPurpose, SignupTable } from './sign-in.tables';

export interface NewSignup {
  purpose: SignupPurpose;
  invitationId?: string;
  resetId?: string;
  personId?: string;
  email?: string;
  emailVerified: boolean;
  /** The invitation's or reset's own end: the signup never outlives it. */
  endsBy: number;
}

export async function startSignup(
  tx: Tx,
  input: NewSignup,
  now: number,
): Promise<{ row: SignupTable; cookie: string }> {
  const { token, hash } = newCookieToken();
  const expiresAt = Math.min(now + SIGNUP_TTL_MS, input.endsBy);
  const row: SignupTable = {
    id: newId('sup'),
    token_hash: hash,
    purpose: input.purpose,
    csrf_token: randomToken(32),
    invitation_id: input.invitationId ?? null,
    reset_id: input.resetId ?? null,
    person_id: input.personId ?? null,
    email: input.email ?? null,
    email_verified: input.emailVerified ? 1 : 0,
    code_hash: null,
    code_expires_at: null,
    code_attempts: 0,
    codes_sent: 0,
    created_at: now,
    expires_at: expiresAt,
    completed_at: null,
  };
  await tx.insertInto('signups').values(row).execute();
  return { row, cookie: setDashboardCookie(SIGNUP_COOKIE, token, expiresAt - now) };
}

export async function liveSignup(db: Db, token: string, now: number): Promise<SignupTable | undefined> {
  const row = await db.selectFrom('signups').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
  if (!row || row.completed_at !== null || now >= row.expires_at) return undefined;
  return row;
}

/** Marks the signup done; false when another request completed it first. */
export async function completeSignup(tx: Tx, id: string, now: number): Promise<boolean> {
  const done = await tx
    .updateTable('signups')
    .set({ completed_at: now })
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) === 1;
}
