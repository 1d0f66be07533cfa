// Operators: the people who run an installation. Their bearer is made on the server host (shown
// once) and works only on the operator routes: list projects, suspend and resume one, change its
// plan, grant it credits. Suspension refuses every credential and session of the project and ends
// its open streams (its own and its screens').
import type { OperatorProject, OperatorProjectList } from '../../sdk/contract/operators';
import { millicredits } from '../../sdk/contract/billing';
import { isoTime } from '../clock';
import { tenantStreamsEndChannel } from '../events/event-log';
import { newId, randomToken, sha256Hex } from '../keys';
import { problem } from '../problem';
import type { Services } from '../services';
import { expectUpdated, type Db, type Store, type Tx, type Work } from '../store/store';
import { MILLIS_PER_CREDIT, recordLedger } from '../tenants/credits';
import { PLANS, planOf } from '../tenants/plans';
import type { TenantTable } from '../tenants/tenants.tables';
import { newestFirstPage } from '../keyset-cursor';

const OPERATOR_TOKEN_PREFIX = 'mq_op_';
export const OPERATOR_PROJECTS_DEFAULT_LIMIT = 50;

export async function createOperator(store: Store, name: string, now: number): Promise<{ id: string; token: string }> {
  const token = OPERATOR_TOKEN_PREFIX + randomToken(32);
  const id = newId('opr');
  await store.db
    .insertInto('operators')
    .values({ id, name, token_hash: sha256Hex(token), created_at: now, revoked_at: null })
    .execute();
  return { id, token };
}

export async function revokeOperator(store: Store, id: string, now: number): Promise<boolean> {
  const done = await store.db
    .updateTable('operators')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) === 1;
}

export async function listOperators(store: Store) {
  return store.db
    .selectFrom('operators')
    .select(['id', 'name', 'created_at', 'revoked_at'])
    .orderBy('created_at')
    .execute();
}

async function projectRow(db: Db | Tx, id: string): Promise<TenantTable> {
  const row = await db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', id)
    .where('generation', '=', 'P')
    .executeTakeFirst();
  if (!row) throw problem('not_found', 'project not found');
  return row;
}

/**
 * Moves a project's status on only from the one read: a change that committed since makes the
 * caller's transaction run again (and find nothing to do), so the change is recorded once.
 */
async function moveStatus(
  work: Work,
  id: string,
  from: TenantTable['status'],
  to: TenantTable['status'],
  now: number,
): Promise<void> {
  expectUpdated(
    await work.db
      .updateTable('tenants')
      .set({ status: to, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst(),
    'project status',
  );
}

function projectsWithCounts(db: Db | Tx) {
  return db
    .selectFrom('tenants')
    .selectAll('tenants')
    .select((eb) => [
      eb
        .selectFrom('memberships')
        .select((m) => m.fn.countAll<number>().as('n'))
        .whereRef('memberships.tenant_id', '=', 'tenants.id')
        .as('member_count'),
      eb
        .selectFrom('credentials')
        .select((c) => c.fn.countAll<number>().as('n'))
        .whereRef('credentials.tenant_id', '=', 'tenants.id')
        .where('credentials.kind', '=', 'project')
        .where('credentials.status', '=', 'active')
        .as('active_agent_count'),
    ])
    .where('tenants.generation', '=', 'P');
}

type ProjectWithCounts = TenantTable & { member_count: number | null; active_agent_count: number | null };

function operatorView(row: ProjectWithCounts): OperatorProject {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    plan: row.plan,
    intent: row.intent === 'advertising' ? 'advertising' : 'signage',
    contact_email: row.email,
    screen_count: row.screen_count,
    member_count: Number(row.member_count ?? 0),
    active_agent_count: Number(row.active_agent_count ?? 0),
    credit_remaining: Math.max(0, Math.floor(row.credit_millis / MILLIS_PER_CREDIT)),
    balance_millicredits: millicredits(row.credit_millis),
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
  };
}

export async function operatorProject(db: Db | Tx, id: string): Promise<OperatorProject> {
  const row = await projectsWithCounts(db).where('tenants.id', '=', id).executeTakeFirst();
  if (!row) throw problem('not_found', 'project not found');
  return operatorView(row as ProjectWithCounts);
}

export async function listProjects(
  db: Db,
  query: { status?: 'active' | 'suspended'; cursor?: string; limit?: number },
): Promise<OperatorProjectList> {
  const limit = query.limit ?? OPERATOR_PROJECTS_DEFAULT_LIMIT;
  let q = projectsWithCounts(db);
  if (query.status) q = q.where('tenants.status', '=', query.status);
  const { rows: page, next_cursor } = await newestFirstPage(q, query.cursor, limit, 'tenants');
  return { items: (page as ProjectWithCounts[]).map(operatorView), next_cursor };
}

/** Suspends the project (a suspended one stays so) and ends its open streams once committed. */
export async function suspendProject(
  services: Services,
  work: Work,
  input: { id: string; reason: string | null; requestId: string },
  now: number,
): Promise<OperatorProject> {
  const row = await projectRow(work.db, input.id);
  if (row.status === 'active') {
    await moveStatus(work, row.id, 'active', 'suspended', now);
    await services.events.append(
      work,
      {
        type: 'account.suspended',
        tenantId: row.id,
        message: 'project suspended by the operator',
        resource: { type: 'project', id: row.id },
        details: { reason: input.reason },
        requestId: input.requestId,
      },
      now,
    );
    work.afterCommit(() => services.notifier.publish(tenantStreamsEndChannel(row.id)));
  } else if (row.status !== 'suspended') {
    throw problem('resource_conflict', `this project is ${row.status}; only an active project can be suspended`);
  }
  return operatorProject(work.db, row.id);
}

export async function resumeProject(
  services: Services,
  work: Work,
  input: { id: string; requestId: string },
  now: number,
): Promise<OperatorProject> {
  const row = await projectRow(work.db, input.id);
  if (row.status === 'suspended') {
    await moveStatus(work, row.id, 'suspended', 'active', now);
    await services.events.append(
      work,
      {
        type: 'account.resumed',
        tenantId: row.id,
        message: 'project resumed by the operator',
        resource: { type: 'project', id: row.id },
        requestId: input.requestId,
      },
      now,
    );
  } else if (row.status !== 'active') {
    throw problem('resource_conflict', `this project is ${row.status}; only a suspended project can be resumed`);
  }
  return operatorProject(work.db, row.id);
}

/** Moves the project to a plan of the catalog; its capability set follows at once. */
export async function changePlan(
  services: Services,
  work: Work,
  input: { id: string; plan: string; requestId: string },
  now: number,
): Promise<OperatorProject> {
  if (!planOf(input.plan)) {
    throw problem(
      'invalid_request',
      `plan: "${input.plan}" is not in the plan catalog (${Object.keys(PLANS).join(', ')})`,
      {
        errors: [{ field: 'plan', code: 'unknown', detail: `one of ${Object.keys(PLANS).join(', ')}` }],
      },
    );
  }
  const row = await projectRow(work.db, input.id);
  if (row.plan !== input.plan) {
    expectUpdated(
      await work.db
        .updateTable('tenants')
        .set({ plan: input.plan, capabilities_revision: row.capabilities_revision + 1, updated_at: now })
        .where('id', '=', row.id)
        .where('capabilities_revision', '=', row.capabilities_revision)
        .executeTakeFirst(),
      'project plan',
    );
    await services.events.append(
      work,
      {
        type: 'project.plan_changed',
        tenantId: row.id,
        message: `plan changed from ${row.plan} to ${input.plan}`,
        resource: { type: 'project', id: row.id },
        details: { plan: input.plan, previous_plan: row.plan },
        requestId: input.requestId,
      },
      now,
    );
  }
  return operatorProject(work.db, row.id);
}

export async function grantCredits(
  services: Services,
  work: Work,
  input: { id: string; credits: number; reason: string; operatorId: string; requestId: string },
  now: number,
): Promise<{ project: OperatorProject; granted_millicredits: string }> {
  const row = await projectRow(work.db, input.id);
  const millis = input.credits * MILLIS_PER_CREDIT;
  await work.db
    .updateTable('tenants')
    .set((eb) => ({ credit_millis: eb('credit_millis', '+', millis) }))
    .where('id', '=', row.id)
    .execute();
  await recordLedger(work.db, row.id, now, 'operator_grant', millis);
  await services.events.append(
    work,
    {
      type: 'billing.credits_granted',
      tenantId: row.id,
      message: `${input.credits} credits granted by the operator`,
      resource: { type: 'project', id: row.id },
      details: { credits: input.credits, reason: input.reason, operator_id: input.operatorId },
      requestId: input.requestId,
    },
    now,
  );
  return { project: await operatorProject(work.db, row.id), granted_millicredits: millicredits(millis) };
}
