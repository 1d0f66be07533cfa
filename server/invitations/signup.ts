// A new person through an invitation: their address (the invitation's, or one proven by a mailed
// code), their name, and their first sign-in credential (a password hash or a verified passkey),
// then acceptance, all in one transaction; the browser leaves signed in to the project.
import type { PersonTable } from '../members/members.tables';
import { storePasskey } from '../members/passkeys';
import { createPerson } from '../members/people';
import { problem } from '../problem';
import type { Services } from '../services';
import { startSession, type StartedSession } from '../sign-in/dashboard-sessions';
import type { NewSignInCredential } from '../sign-in/resets';
import type { SignupTable } from '../sign-in/sign-in.tables';
import { completeSignup } from '../sign-in/signups';
import type { Work } from '../store/store';
import { acceptableInvitation, acceptInvitation } from './acceptance';

/** Throws unless the signup may make a person now (an invitation whose address is proven). */
export function checkSignupReady(signup: SignupTable): { invitationId: string; email: string } {
  if (signup.purpose !== 'invitation' || signup.invitation_id === null)
    throw problem('forbidden', 'this signup is not an invitation');
  if (signup.email === null || signup.email_verified !== 1)
    throw problem('resource_conflict', 'confirm your address first: ask for a code and enter it');
  return { invitationId: signup.invitation_id, email: signup.email };
}

export async function completeInvitationSignup(
  services: Services,
  work: Work,
  input: { signup: SignupTable; displayName: string; credential: NewSignInCredential; requestId: string },
  now: number,
): Promise<{ person: PersonTable; session: StartedSession }> {
  const { invitationId, email } = checkSignupReady(input.signup);
  const invitation = await acceptableInvitation(work.db, { id: invitationId }, now);
  if (!(await completeSignup(work.db, input.signup.id, now)))
    throw problem('link_invalid', 'this signup was completed already');
  const person = await createPerson(
    work.db,
    {
      email,
      displayName: input.displayName,
      passwordHash: 'passwordHash' in input.credential ? input.credential.passwordHash : null,
      userHandle: 'userHandle' in input.credential ? input.credential.userHandle : undefined,
    },
    now,
  );
  if ('passkey' in input.credential) await storePasskey(work.db, person.id, input.credential.passkey, now);
  await acceptInvitation(services, work, { invitationId: invitation.id, person, requestId: input.requestId }, now);
  const session = await startSession(
    work.db,
    { personId: person.id, method: 'signup', tenantId: invitation.tenant_id },
    now,
  );
  return { person, session };
}
