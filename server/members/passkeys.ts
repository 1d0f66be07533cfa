// Passkeys (WebAuthn, with @simplewebauthn/server). The relying party is the dashboard host;
// credentials are discoverable, user verification is required, attestation is none. Each ceremony
// is a row with its challenge, bound to the cookie that began it, single-use, and valid five
// minutes; a sign-in names no user (no allowCredentials), so it reveals nothing about who exists.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Config } from '../config';
import { newId } from '../keys';
import { problem } from '../problem';
import type { WebauthnCeremonyTable } from '../sign-in/sign-in.tables';
import type { Tx } from '../store/store';
import type { PasskeyTable, PersonTable } from './members.tables';

/** The reference's DashboardCeremonyTTL: a ceremony is valid five minutes. */
export const CEREMONY_TTL_MS = 5 * 60_000;
const RP_NAME = 'Marquee';
/** ES256, EdDSA and RS256: what platform authenticators and security keys make. */
const ALGORITHMS = [-7, -8, -257];

export interface RelyingParty {
  id: string;
  origin: string;
}

export function relyingParty(config: Pick<Config, 'dashboardOrigin'>): RelyingParty {
  return { id: new URL(config.dashboardOrigin).hostname, origin: config.dashboardOrigin };
}

function invalid(detail: string) {
  return problem('passkey_invalid', detail);
}

/** Marks the ceremony used and returns it, or throws passkey_invalid (unknown, elapsed, used, other cookie). */
async function takeCeremony(
  tx: Tx,
  id: string,
  kind: WebauthnCeremonyTable['kind'],
  binding: string | null,
  now: number,
): Promise<WebauthnCeremonyTable> {
  const row = await tx.selectFrom('webauthn_ceremonies').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || row.kind !== kind || row.binding !== binding || row.used_at !== null || now >= row.expires_at)
    throw invalid('this passkey ceremony is unknown, elapsed, already used or not yours; start again');
  const used = await tx
    .updateTable('webauthn_ceremonies')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(used.numUpdatedRows) !== 1) throw invalid('this passkey ceremony was already used; start again');
  return row;
}

export interface RegistrationSubject {
  /** `session:<id>` or `signup:<id>`: the cookie row the ceremony is bound to. */
  binding: string;
  email: string;
  displayName: string;
  /** The person's handle, or a new one for a person the signup will create. */
  userHandle: string;
  personId: string | null;
  /** The person's passkeys, so the authenticator does not make a second one for the same account. */
  existing: Pick<PasskeyTable, 'credential_id' | 'transports'>[];
}

export async function startRegistration(
  tx: Tx,
  rp: RelyingParty,
  subject: RegistrationSubject,
  now: number,
): Promise<{ ceremonyId: string; options: Record<string, unknown> }> {
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: subject.email,
    userDisplayName: subject.displayName,
    userID: Buffer.from(subject.userHandle, 'base64url'),
    timeout: CEREMONY_TTL_MS,
    attestationType: 'none',
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    excludeCredentials: subject.existing.map((p) => ({
      id: p.credential_id,
      transports: p.transports ? (JSON.parse(p.transports) as AuthenticatorTransport[]) : undefined,
    })),
    supportedAlgorithmIDs: ALGORITHMS,
  });
  const ceremonyId = newId('cer');
  await tx
    .insertInto('webauthn_ceremonies')
    .values({
      id: ceremonyId,
      kind: 'registration',
      challenge: options.challenge,
      binding: subject.binding,
      person_id: subject.personId,
      display_name: subject.displayName,
      user_handle: subject.userHandle,
      created_at: now,
      expires_at: now + CEREMONY_TTL_MS,
      used_at: null,
    })
    .execute();
  return { ceremonyId, options: options as unknown as Record<string, unknown> };
}

export interface VerifiedRegistration {
  ceremony: WebauthnCeremonyTable;
  passkey: Omit<PasskeyTable, 'id' | 'person_id' | 'created_at' | 'last_used_at'>;
}

export async function finishRegistration(
  tx: Tx,
  rp: RelyingParty,
  input: { ceremonyId: string; binding: string; response: unknown },
  now: number,
): Promise<VerifiedRegistration> {
  const ceremony = await takeCeremony(tx, input.ceremonyId, 'registration', input.binding, now);
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: input.response as RegistrationResponseJSON,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (error) {
    throw invalid(`the passkey could not be verified: ${reason(error)}`);
  }
  if (!verified.verified) throw invalid('the passkey could not be verified');
  const { credential, credentialBackedUp } = verified.registrationInfo;
  const known = await tx
    .selectFrom('passkeys')
    .select('id')
    .where('credential_id', '=', credential.id)
    .executeTakeFirst();
  if (known) throw invalid('this passkey is registered already');
  return {
    ceremony,
    passkey: {
      credential_id: credential.id,
      public_key: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ? JSON.stringify(credential.transports) : null,
      backed_up: credentialBackedUp ? 1 : 0,
    },
  };
}

export async function storePasskey(
  tx: Tx,
  personId: string,
  passkey: VerifiedRegistration['passkey'],
  now: number,
): Promise<void> {
  await tx
    .insertInto('passkeys')
    .values({ id: newId('pk'), person_id: personId, ...passkey, created_at: now, last_used_at: null })
    .execute();
}

export async function startAssertion(
  tx: Tx,
  rp: RelyingParty,
  now: number,
): Promise<{ ceremonyId: string; options: Record<string, unknown> }> {
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'required',
    timeout: CEREMONY_TTL_MS,
  });
  const ceremonyId = newId('cer');
  await tx
    .insertInto('webauthn_ceremonies')
    .values({
      id: ceremonyId,
      kind: 'assertion',
      challenge: options.challenge,
      binding: null,
      person_id: null,
      display_name: null,
      user_handle: null,
      created_at: now,
      expires_at: now + CEREMONY_TTL_MS,
      used_at: null,
    })
    .execute();
  return { ceremonyId, options: options as unknown as Record<string, unknown> };
}

/** Verifies a usernameless assertion and returns the person its discoverable credential belongs to. */
export async function finishAssertion(
  tx: Tx,
  rp: RelyingParty,
  input: { ceremonyId: string; response: unknown },
  now: number,
): Promise<PersonTable> {
  const ceremony = await takeCeremony(tx, input.ceremonyId, 'assertion', null, now);
  const response = input.response as AuthenticationResponseJSON;
  const credentialId = typeof response?.id === 'string' ? response.id : '';
  const passkey = await tx
    .selectFrom('passkeys')
    .selectAll()
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
  if (!passkey) throw invalid('this passkey is not registered here');
  const person = await tx
    .selectFrom('people')
    .selectAll()
    .where('id', '=', passkey.person_id)
    .executeTakeFirstOrThrow();
  // A discoverable credential names its user; it must be the passkey's own person.
  const userHandle = response.response?.userHandle;
  if (userHandle !== undefined && userHandle !== person.user_handle)
    throw invalid('the passkey answered for another user');
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      credential: {
        id: passkey.credential_id,
        publicKey: Buffer.from(passkey.public_key, 'base64url'),
        counter: passkey.counter,
        transports: passkey.transports ? (JSON.parse(passkey.transports) as AuthenticatorTransport[]) : undefined,
      },
    });
  } catch (error) {
    throw invalid(`the passkey assertion could not be verified: ${reason(error)}`);
  }
  if (!verified.verified) throw invalid('the passkey assertion could not be verified');
  await tx
    .updateTable('passkeys')
    .set({ counter: verified.authenticationInfo.newCounter, last_used_at: now })
    .where('id', '=', passkey.id)
    .execute();
  return person;
}

/** The library's reason, short and without the response it quotes. */
function reason(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]!.slice(0, 160) : 'unknown reason';
}
