// Dashboard sessions: one row per signed-in browser, named by the session cookie's hash. A session
// ends at its absolute expiry, after SESSION_IDLE_MS without a request, on logout, or when a
// sign-in reset of its person revokes it.
import type { DashboardSession, DashboardSessionSummary, SignInMethod } from '../../sdk/contract/people';
import { isoTime } from '../clock';
import { newId, randomToken, sha256Hex } from '../keys';
import { problem } from '../problem';
import type { Db, Tx } from '../store/store';
import {
  newCookieToken,
  SESSION_ABSOLUTE_MS,
  SESSION_COOKIE,
  SESSION_IDLE_MS,
  SESSION_TOUCH_EVERY_MS,
  setDashboardCookie,
} from './dashboard-cookies';
import type { DashboardSessionTable } from './sign-in.tables';
import type { MembershipKind, PersonTable } from '../members/members.tables';

export interface StartedSession {
  row: DashboardSessionTable;
  /** The Set-Cookie header that carries it. */
  cookie: string;
}

/** The project a new session selects: the one the person joined last, or none. */
async function defaultProject(tx: Tx, personId: string): Promise<string | null> {
  const row = await tx
    .selectFrom('memberships')
    .innerJoin('tenants', 'tenants.id', 'memberships.tenant_id')
    .select('memberships.tenant_id')
    .where('memberships.person_id', '=', personId)
    .where('tenants.status', '=', 'active')
    .orderBy('memberships.created_at', 'desc')
    .orderBy('memberships.tenant_id')
    .executeTakeFirst();
  return row?.tenant_id ?? null;
}

export async function startSession(
  tx: Tx,
  input: { personId: string; method: SignInMethod; tenantId?: string },
  now: number,
): Promise<StartedSession> {
  const { token, hash } = newCookieToken();
  const row: DashboardSessionTable = {
    id: newId('dss'),
    token_hash: hash,
    person_id: input.personId,
    tenant_id: input.tenantId ?? (await defaultProject(tx, input.personId)),
    csrf_token: randomToken(32),
    method: input.method,
    created_at: now,
    last_seen_at: now,
    expires_at: now + SESSION_ABSOLUTE_MS,
    revoked_at: null,
  };
  await tx.insertInto('dashboard_sessions').values(row).execute();
  return { row, cookie: setDashboardCookie(SESSION_COOKIE, token, SESSION_ABSOLUTE_MS) };
}

export function idleExpiry(row: Pick<DashboardSessionTable, 'last_seen_at' | 'expires_at'>): number {
  return Math.min(row.last_seen_at + SESSION_IDLE_MS, row.expires_at);
}

/** The live session a cookie names, or undefined (unknown, revoked, expired, idle too long). */
export async function liveSession(db: Db, token: string, now: number): Promise<DashboardSessionTable | undefined> {
  const row = await db
    .selectFrom('dashboard_sessions')
    .selectAll()
    .where('token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row || row.revoked_at !== null || now >= idleExpiry(row)) return undefined;
  return row;
}

/** Records use of the session (at most once a minute), which pushes its idle expiry out. */
export async function touchSession(db: Db, row: DashboardSessionTable, now: number): Promise<void> {
  if (now - row.last_seen_at < SESSION_TOUCH_EVERY_MS) return;
  await db
    .updateTable('dashboard_sessions')
    .set({ last_seen_at: now })
    .where('id', '=', row.id)
    .where('revoked_at', 'is', null)
    .execute();
  row.last_seen_at = now;
}

export async function revokeSession(db: Db | Tx, id: string, now: number): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes one of the person's own sessions; another person's session id answers not_found. */
export async function revokeOwnSession(tx: Tx, personId: string, id: string, now: number): Promise<void> {
  const row = await tx
    .selectFrom('dashboard_sessions')
    .select('id')
    .where('id', '=', id)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  if (!row) throw problem('not_found', 'session not found');
  await revokeSession(tx, row.id, now);
}

/** The session now works in this project (the caller checked the person is its member). */
export async function selectSessionProject(tx: Tx, sessionId: string, tenantId: string): Promise<void> {
  await tx.updateTable('dashboard_sessions').set({ tenant_id: tenantId }).where('id', '=', sessionId).execute();
}

/** Revokes every session of the person but `keep` (a sign-in reset keeps only the one it starts). */
export async function revokeSessionsOf(tx: Tx, personId: string, now: number, keep?: string): Promise<void> {
  let update = tx
    .updateTable('dashboard_sessions')
    .set({ revoked_at: now })
    .where('person_id', '=', personId)
    .where('revoked_at', 'is', null);
  if (keep) update = update.where('id', '!=', keep);
  await update.execute();
}

export function sessionView(
  row: DashboardSessionTable,
  person: Pick<PersonTable, 'id' | 'display_name' | 'email'>,
  project: { id: string; name: string; membership: MembershipKind } | null,
): DashboardSession {
  return {
    person_id: person.id,
    display_name: person.display_name,
    email: person.email,
    project,
    csrf_token: row.csrf_token,
    method: row.method as SignInMethod,
    created_at: isoTime(row.created_at),
    expires_at: isoTime(row.expires_at),
    idle_expires_at: isoTime(idleExpiry(row)),
  };
}

export async function listSessions(
  db: Db,
  personId: string,
  currentId: string,
  now: number,
): Promise<DashboardSessionSummary[]> {
  const rows = await db
    .selectFrom('dashboard_sessions')
    .selectAll()
    .where('person_id', '=', personId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(100)
    .execute();
  return rows
    .filter((row) => now < idleExpiry(row))
    .map((row) => ({
      id: row.id,
      method: row.method as SignInMethod,
      created_at: isoTime(row.created_at),
      last_seen_at: isoTime(row.last_seen_at),
      expires_at: isoTime(idleExpiry(row)),
      current: row.id === currentId,
    }));
}

/** Sessions, signups and ceremonies past their end are deleted (housekeeping). */
export async function pruneDashboardRows(db: Db, now: number): Promise<void> {
  await db
    .deleteFrom('dashboard_sessions')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb('last_seen_at', '<=', now - SESSION_IDLE_MS),
        eb('revoked_at', '<=', now - SESSION_IDLE_MS),
      ]),
    )
    .execute();
  await db.deleteFrom('signups').where('expires_at', '<=', now).execute();
  await db.deleteFrom('webauthn_ceremonies').where('expires_at', '<=', now).execute();
}

/** The session answer: the session, its person and the project it selected. */
export async function sessionAnswer(
  db: Db | Tx,
  started: StartedSession,
  person: PersonTable,
): Promise<DashboardSession> {
  let project: DashboardSession['project'] = null;
  if (started.row.tenant_id !== null) {
    const row = await db
      .selectFrom('memberships')
      .innerJoin('tenants', 'tenants.id', 'memberships.tenant_id')
      .select(['tenants.id', 'tenants.name', 'memberships.kind'])
      .where('memberships.tenant_id', '=', started.row.tenant_id)
      .where('memberships.person_id', '=', person.id)
      .executeTakeFirst();
    if (row) project = { id: row.id, name: row.name, membership: row.kind };
  }
  return sessionView(started.row, person, project);
}
