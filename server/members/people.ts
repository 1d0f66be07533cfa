// People, their memberships of projects and what the project's agents may ask of them: whether
// anyone can sign in yet (connection_ready), and how many members a project has (the
// contact-address rule reissues invitations only to projects with none).
import type { DashboardMember, DashboardProjectRef } from '../../sdk/contract/people';
import { isoTime } from '../clock';
import { newId, randomToken } from '../keys';
import { problem } from '../problem';
import type { Db, Tx } from '../store/store';
import type { MembershipKind, MembershipTable, PersonTable } from './members.tables';

/** Addresses are compared and stored in lower case (the local part is case-insensitive in practice). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function personByEmail(db: Db | Tx, email: string): Promise<PersonTable | undefined> {
  return db.selectFrom('people').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

export async function personById(db: Db | Tx, id: string): Promise<PersonTable> {
  const row = await db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw problem('not_found', 'person not found');
  return row;
}

export async function createPerson(
  tx: Tx,
  input: { email: string; displayName: string; passwordHash: string | null; userHandle?: string },
  now: number,
): Promise<PersonTable> {
  const row: PersonTable = {
    id: newId('usr'),
    email: normalizeEmail(input.email),
    display_name: input.displayName,
    password_hash: input.passwordHash,
    user_handle: input.userHandle ?? randomToken(32),
    created_at: now,
    updated_at: now,
  };
  const inserted = await tx
    .insertInto('people')
    .values(row)
    .onConflict((oc) => oc.column('email').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0)
    throw problem('resource_conflict', 'this address already has a login: sign in to accept the invitation');
  return row;
}

/** Adds the membership; false when the person is a member already (nothing changes). */
export async function addMembership(
  tx: Tx,
  input: { tenantId: string; personId: string; kind: MembershipKind; advertising: string | null; invitationId: string },
  now: number,
): Promise<boolean> {
  const row: MembershipTable = {
    tenant_id: input.tenantId,
    person_id: input.personId,
    kind: input.kind,
    advertising: input.advertising,
    invitation_id: input.invitationId,
    created_at: now,
  };
  const inserted = await tx
    .insertInto('memberships')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'person_id']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function membershipOf(
  db: Db | Tx,
  tenantId: string,
  personId: string,
): Promise<MembershipTable | undefined> {
  return db
    .selectFrom('memberships')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
}

/** spec AgentSelfStatus.connection_ready: a member of the project can sign in (a passkey or a password). */
export async function connectionReady(db: Db | Tx, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('memberships')
    .innerJoin('people', 'people.id', 'memberships.person_id')
    .select('people.id')
    .where('memberships.tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb('people.password_hash', 'is not', null),
        eb.exists(eb.selectFrom('passkeys').select('passkeys.id').whereRef('passkeys.person_id', '=', 'people.id')),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function projectsOf(db: Db | Tx, personId: string): Promise<DashboardProjectRef[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('tenants', 'tenants.id', 'memberships.tenant_id')
    .select(['tenants.id', 'tenants.name', 'memberships.kind'])
    .where('memberships.person_id', '=', personId)
    .where('tenants.status', '=', 'active')
    .orderBy('memberships.created_at', 'desc')
    .orderBy('tenants.id')
    .execute();
  return rows.map((r) => ({ id: r.id, name: r.name, membership: r.kind }));
}

export async function membersOf(db: Db | Tx, tenantId: string): Promise<DashboardMember[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('people', 'people.id', 'memberships.person_id')
    .select((eb) => [
      'people.id',
      'people.display_name',
      'people.email',
      'people.password_hash',
      'memberships.kind',
      'memberships.created_at',
      eb
        .selectFrom('passkeys')
        .select((p) => p.fn.countAll<number>().as('n'))
        .whereRef('passkeys.person_id', '=', 'people.id')
        .as('passkeys'),
    ])
    .where('memberships.tenant_id', '=', tenantId)
    .orderBy('memberships.created_at')
    .orderBy('people.id')
    .execute();
  return rows.map((r) => ({
    person_id: r.id,
    display_name: r.display_name,
    email: r.email,
    membership: r.kind,
    joined_at: isoTime(r.created_at),
    password: r.password_hash !== null,
    passkeys: Number(r.passkeys ?? 0),
  }));
}
