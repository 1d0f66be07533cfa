// Signing in to the dashboard and the credentials people sign in with: passwords (checked off the
// event loop, outside any transaction) and passkeys (registered by a signup, a reset or a
// signed-in person adding one; asserted without naming a user).
import type { DashboardSession } from '../../sdk/contract/people';
import { completeInvitationSignup, checkSignupReady } from '../invitations/signup';
import type { PersonTable } from '../members/members.tables';
import {
  finishAssertion,
  finishRegistration,
  relyingParty,
  startAssertion,
  startRegistration,
  storePasskey,
} from '../members/passkeys';
import { hashPassword, Password, verifyDecoy, verifyPassword } from '../members/passwords';
import { personByEmail, personById } from '../members/people';
import { invalidField, problem } from '../problem';
import type { Services } from '../services';
import type { Work } from '../store/store';
import { randomToken } from '../keys';
import type { DashboardPrincipal, SignupPrincipal } from './dashboard.auth';
import { sessionAnswer, sessionView, startSession, type StartedSession } from './dashboard-sessions';
import { completeReset, type NewSignInCredential } from './resets';

/** The person whose password this is, or unauthorized; an unknown address costs the same time. */
export async function checkPassword(services: Services, email: string, password: string): Promise<PersonTable> {
  const person = await personByEmail(services.store.db, email);
  const ok =
    person?.password_hash != null
      ? await verifyPassword(password, person.password_hash)
      : await verifyDecoy(password, services.tuning.passwordHash);
  if (!person || !ok) throw problem('unauthorized', 'the address or the password is not right');
  return person;
}

/** A new password, checked against the rules, hashed (slow: call it outside a transaction). */
export async function newPasswordHash(services: Services, password: string): Promise<string> {
  const checked = Password.safeParse(password);
  if (!checked.success) throw invalidField('password', checked.error.issues[0]!.message, 'too_short');
  return hashPassword(password, services.tuning.passwordHash);
}

export async function signInWithPassword(work: Work, person: PersonTable, now: number): Promise<StartedSession> {
  return startSession(work.db, { personId: person.id, method: 'password' }, now);
}

export async function beginPasskeySignIn(services: Services, work: Work, now: number) {
  return startAssertion(work.db, relyingParty(services.config), now);
}

export async function finishPasskeySignIn(
  services: Services,
  work: Work,
  input: { ceremonyId: string; credential: unknown },
  now: number,
): Promise<{ session: StartedSession; person: PersonTable }> {
  const person = await finishAssertion(
    work.db,
    relyingParty(services.config),
    { ceremonyId: input.ceremonyId, response: input.credential },
    now,
  );
  return { session: await startSession(work.db, { personId: person.id, method: 'passkey' }, now), person };
}

function bindingOf(principal: SignupPrincipal | DashboardPrincipal): string {
  return principal.realm === 'signup' ? `signup:${principal.signup.id}` : `session:${principal.session.id}`;
}

/** Creation options for a passkey: a new person's (signup), a reset's, or one more for a signed-in person. */
export async function beginPasskeyRegistration(
  services: Services,
  work: Work,
  principal: SignupPrincipal | DashboardPrincipal,
  displayName: string | undefined,
  now: number,
) {
  const rp = relyingParty(services.config);
  const binding = bindingOf(principal);
  if (principal.realm === 'dashboard') {
    if (displayName !== undefined)
      throw invalidField('display_name', 'a signed-in person has a name already; omit it', 'unexpected');
    const existing = await work.db
      .selectFrom('passkeys')
      .select(['credential_id', 'transports'])
      .where('person_id', '=', principal.person.id)
      .execute();
    const p = principal.person;
    return startRegistration(
      work.db,
      rp,
      { binding, email: p.email, displayName: p.display_name, userHandle: p.user_handle, personId: p.id, existing },
      now,
    );
  }
  const { signup } = principal;
  if (signup.purpose === 'reset') {
    if (displayName !== undefined) throw invalidField('display_name', 'a reset keeps your name; omit it', 'unexpected');
    const p = await personById(work.db, signup.person_id!);
    // The old passkeys go when the reset completes, so none is excluded.
    return startRegistration(
      work.db,
      rp,
      { binding, email: p.email, displayName: p.display_name, userHandle: p.user_handle, personId: p.id, existing: [] },
      now,
    );
  }
  const { email } = checkSignupReady(signup);
  if (displayName === undefined) throw invalidField('display_name', 'is required to make your login', 'required');
  return startRegistration(
    work.db,
    rp,
    { binding, email, displayName, userHandle: randomToken(32), personId: null, existing: [] },
    now,
  );
}

export interface PasskeyRegistered {
  session: DashboardSession;
  /** Set-Cookie of a session this registration started (signup, reset); none when one more passkey was added. */
  cookie?: string;
}

export async function finishPasskeyRegistration(
  services: Services,
  work: Work,
  principal: SignupPrincipal | DashboardPrincipal,
  input: { ceremonyId: string; credential: unknown; requestId: string },
  now: number,
): Promise<PasskeyRegistered> {
  const verified = await finishRegistration(
    work.db,
    relyingParty(services.config),
    { ceremonyId: input.ceremonyId, binding: bindingOf(principal), response: input.credential },
    now,
  );
  if (principal.realm === 'dashboard') {
    await storePasskey(work.db, principal.person.id, verified.passkey, now);
    return { session: sessionView(principal.session, principal.person, principal.project) };
  }
  const credential: NewSignInCredential = { passkey: verified.passkey, userHandle: verified.ceremony.user_handle! };
  const done =
    principal.signup.purpose === 'reset'
      ? await completeReset(services, work, { signup: principal.signup, credential, requestId: input.requestId }, now)
      : await completeInvitationSignup(
          services,
          work,
          {
            signup: principal.signup,
            displayName: verified.ceremony.display_name!,
            credential,
            requestId: input.requestId,
          },
          now,
        );
  return { session: await sessionAnswer(work.db, done.session, done.person), cookie: done.session.cookie };
}
