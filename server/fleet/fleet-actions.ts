// Fleet actions (POST /api/v1/screens/actions): one action over up to 500 screens, each screen through
// the entry its single-screen route runs (screen-actions.ts). The selection and the prepared action
// are pinned under the Idempotency-Key before fan-out, and each screen's answer is recorded in the
// transaction that did its work, so a retry after a crash fans out to the same screens, replays the
// finished ones and does the rest. The whole answer is then recorded by the pipeline for 24 hours.
import { FLEET_SELECTION_MAX } from '../../sdk/contract/limits';
import type {
  FleetSelector,
  ScreenActionItem,
  ScreenActionRequest,
  ScreenActionResult,
} from '../../sdk/contract/fleet';
import { problemBody, toProblem } from '../http/problem-response';
import { admit, type RateBudget } from '../http/rate-limit';
import type { Generation } from '../problem';
import { invalidField, problem } from '../problem';
import { findScreen, screensById, viewOf, viewsOf } from '../screens/screens';
import type { ScreenTable } from '../screens/screens.tables';
import type { HeldEvent } from '../events/event-log';
import type { Services } from '../services';
import { inSavepoint, json, StaleWrite, type Db, type Work } from '../store/store';
import {
  ACTIONS,
  BUDGETS,
  prepareAction,
  projectBudget,
  screenBudget,
  screenControlIpBudget,
  type ActionRequest,
  type PreparedAction,
  type ScreenAnswer,
} from './screen-actions';

/** spec: idempotency records of screen actions are kept 24 hours. */
export const FLEET_RECORD_RETENTION_MS = 24 * 3600_000;

/**
 * One screen's action: the checks that need no budget, then its own budget (and the project's, for
 * a single-screen route; a fan-out spends the project's once for all), then the work.
 */
export async function runScreenAction(
  r: ActionRequest,
  screen: ScreenTable,
  action: PreparedAction,
  spend: 'project-and-screen' | 'screen',
): Promise<{ answer: ScreenAnswer; headers: Record<string, string> }> {
  const { answer, headers } = await actOnScreen(r, screen, action, spend);
  if (answer.view) answer.body = await viewOf(r.services, r.work.db, answer.view);
  return { answer, headers };
}

/** runScreenAction with a view answer left to render (ScreenAnswer.view): a fan-out renders a group's. */
async function actOnScreen(
  r: ActionRequest,
  screen: ScreenTable,
  action: PreparedAction,
  spend: 'project-and-screen' | 'screen',
): Promise<{ answer: ScreenAnswer; headers: Record<string, string> }> {
  const entry = ACTIONS[action.type];
  entry.precheck?.(screen);
  let headers: Record<string, string> = {};
  if (entry.family) {
    const budgets: RateBudget[] = [screenBudget(entry.family, screen)];
    if (spend === 'project-and-screen') budgets.unshift(projectBudget(entry.family, screen.tenant_id));
    headers = await admit(r.services.rateLimiter, budgets, r.now);
  }
  return { answer: await entry.run(r, screen, action), headers };
}

/** The screens a selector names, in selector order: ids as given (any state), or a tag's active screens. */
export async function resolveSelection(db: Db, tenantId: string, selector: FleetSelector): Promise<string[]> {
  if ('ids' in selector) return selector.ids;
  const rows = await db
    .selectFrom('screens')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('state', '=', 'active')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('screen_tags')
        .select('screen_id')
        .where('tenant_id', '=', tenantId)
        .where('tag', '=', selector.tag),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(FLEET_SELECTION_MAX + 1)
    .execute();
  if (rows.length > FLEET_SELECTION_MAX)
    throw invalidField('selector.tag', `more than ${FLEET_SELECTION_MAX} active screens have this tag; select by ids`);
  return rows.map((r) => r.id);
}

export interface FleetRequest {
  tenantId: string;
  request: ScreenActionRequest;
  now: number;
  requestId: string;
  generation: Generation;
  /** The caller's address (the screen-control family's per-IP budget). */
  clientIp: string;
  /** The Idempotency-Key and the request's fingerprint, when the caller sent a key. */
  record?: { key: string; fingerprint: string };
}

interface Pinned {
  screenIds: string[];
  action: PreparedAction;
  done: Map<string, ScreenActionItem>;
}

/** The pinned selection and action of this key, pinning them now when the key is new. */
async function pin(services: Services, f: FleetRequest): Promise<Pinned> {
  const { db } = services.store;
  const record = f.record;
  if (record) {
    const found = await db
      .selectFrom('fleet_actions')
      .selectAll()
      .where('tenant_id', '=', f.tenantId)
      .where('idempotency_key', '=', record.key)
      .where('created_at', '>', f.now - FLEET_RECORD_RETENTION_MS)
      .executeTakeFirst();
    if (found) {
      if (found.fingerprint !== record.fingerprint)
        throw problem(
          'idempotency_mismatch',
          'this Idempotency-Key was used with a different request; use a new key for a new request',
        );
      const rows = await db
        .selectFrom('fleet_action_results')
        .select(['screen_id', 'result'])
        .where('tenant_id', '=', f.tenantId)
        .where('idempotency_key', '=', record.key)
        .execute();
      return {
        screenIds: json.read<string[]>(found.screen_ids)!,
        action: json.read<PreparedAction>(found.action)!,
        done: new Map(rows.map((r) => [r.screen_id, json.read<ScreenActionItem>(r.result)!])),
      };
    }
  }
  // A new request: validated against the request clock and resolved once, before any screen.
  const action = prepareAction(f.request.action, f.now);
  const screenIds = await resolveSelection(db, f.tenantId, f.request.selector);
  if (record) {
    await services.store.transaction(async (work) => {
      // An expired record of the same key gives way to the new request.
      await work.db
        .deleteFrom('fleet_action_results')
        .where('tenant_id', '=', f.tenantId)
        .where('idempotency_key', '=', record.key)
        .execute();
      await work.db
        .deleteFrom('fleet_actions')
        .where('tenant_id', '=', f.tenantId)
        .where('idempotency_key', '=', record.key)
        .execute();
      await work.db
        .insertInto('fleet_actions')
        .values({
          tenant_id: f.tenantId,
          idempotency_key: record.key,
          fingerprint: record.fingerprint,
          screen_ids: JSON.stringify(screenIds),
          action: JSON.stringify(action),
          created_at: f.now,
        })
        .execute();
    });
  }
  return { screenIds, action, done: new Map() };
}

/** The answers of a group of screens, one INSERT, in the transaction that did their work. */
async function recordResults(work: Work, f: FleetRequest, items: readonly ScreenActionItem[]): Promise<void> {
  if (!f.record || items.length === 0) return;
  const key = f.record.key;
  await work.db
    .insertInto('fleet_action_results')
    .values(
      items.map((item) => ({
        tenant_id: f.tenantId,
        idempotency_key: key,
        screen_id: item.screen_id,
        result: JSON.stringify(item),
      })),
    )
    .execute();
}

/**
 * Screens one transaction carries. A commit costs as much as a screen's whole work on SQLite; a
 * group of 50 holds the store for tens of milliseconds, like a batch of mints (MINTS_PER_TRANSACTION).
 */
export const SCREENS_PER_TRANSACTION = 50;

/** A screen's outcome in its group: its item, and the screen whose view is its answer (rendered with the group's). */
interface Outcome {
  item: ScreenActionItem;
  view?: ScreenTable;
}

/**
 * One screen's action in a savepoint of `work`; a failure is its problem. `screen` is the row the
 * group read for it (undefined: read it now, as its single-screen route does; not found answers so).
 */
async function runOne(
  services: Services,
  f: FleetRequest,
  action: PreparedAction,
  work: Work,
  screenId: string,
  screen: ScreenTable | undefined,
  events: HeldEvent[],
): Promise<Outcome> {
  try {
    return await inSavepoint(work, async (savepoint) => {
      // The group's events are one INSERT at its end; a screen that fails passes none on.
      const unit = services.events.hold(savepoint);
      const row = screen ?? (await findScreen(unit.db, f.tenantId, screenId));
      const r: ActionRequest = { services, events: services.events, work: unit, now: f.now, requestId: f.requestId };
      const { answer } = await actOnScreen(r, row, action, 'screen');
      events.push(...unit.heldEvents);
      const item: ScreenActionItem = { screen_id: screenId, status: answer.status, ok: true, result: answer.body };
      return answer.view ? { item, view: answer.view } : { item };
    });
  } catch (error) {
    // A concurrent write to this screen reruns the group's transaction (Store.transaction), not a failure.
    if (error instanceof StaleWrite) throw error;
    const p = toProblem(error, services.logger, f.requestId);
    const body = problemBody(p, {
      controlOrigin: services.config.controlOrigin,
      generation: f.generation,
      instance: `/api/v1/screens/${screenId}`,
    });
    return { item: { screen_id: screenId, status: body.status as number, ok: false, problem: body } };
  }
}

/**
 * One group of screens in one transaction: their rows read together, each screen's action in its
 * savepoint, then what the group shares: the views its answers are (with the reads of one view),
 * its recorded answers and its events (one INSERT each).
 */
async function runGroup(
  services: Services,
  f: FleetRequest,
  action: PreparedAction,
  work: Work,
  group: readonly string[],
): Promise<ScreenActionItem[]> {
  // Each row serves the first screen of its id only (a repeated id reads its row again, as changed).
  const rows = await screensById(work.db, f.tenantId, group);
  const outcomes: Outcome[] = [];
  const events: HeldEvent[] = [];
  for (const screenId of group) {
    const row = rows.get(screenId);
    rows.delete(screenId);
    outcomes.push(await runOne(services, f, action, work, screenId, row, events));
  }
  const viewing = outcomes.filter((o) => o.view !== undefined);
  const views = await viewsOf(
    services,
    work.db,
    viewing.map((o) => o.view!),
  );
  viewing.forEach((o, i) => {
    o.item = { screen_id: o.item.screen_id, status: o.item.status, ok: true, result: views[i] };
  });
  const items = outcomes.map((o) => o.item);
  await recordResults(work, f, items);
  await services.events.writeHeld(work, events);
  return items;
}

/**
 * Runs the fleet action: whole-request checks first, then the screens, SCREENS_PER_TRANSACTION a commit.
 * Answers the result and the rate headers of the request's own budgets (none when nothing was spent).
 */
export async function runFleetAction(
  services: Services,
  f: FleetRequest,
): Promise<{ result: ScreenActionResult; headers: Record<string, string> }> {
  const pinned = await pin(services, f);
  const remaining = pinned.screenIds.filter((id) => !pinned.done.has(id));
  const family = ACTIONS[pinned.action.type].family;
  // spec: a fan-out larger than the remaining project budget is refused whole before any screen is
  // touched; finished screens of a retry spend nothing again. A screen-control fan-out is also one
  // request of the caller's address (screen-control-ip); both are spent or neither.
  let headers: Record<string, string> = {};
  if (family && remaining.length > 0) {
    const budgets = [projectBudget(family, f.tenantId, remaining.length)];
    if (family === BUDGETS.screenControl) budgets.unshift(screenControlIpBudget(f.clientIp));
    headers = await admit(services.rateLimiter, budgets, f.now);
  }

  // Screens share a transaction in groups, each in a savepoint with its recorded answer: a commit
  // per screen was most of a fan-out's time. A crash loses at most the open group, which a retry
  // does again (nothing of it committed); a failed screen rolls back alone.
  for (let i = 0; i < remaining.length; i += SCREENS_PER_TRANSACTION) {
    const group = remaining.slice(i, i + SCREENS_PER_TRANSACTION);
    const items = await services.store.transaction((work) => runGroup(services, f, pinned.action, work, group));
    for (const item of items) pinned.done.set(item.screen_id, item);
  }
  const results = pinned.screenIds.map((id) => pinned.done.get(id)!);
  const succeeded = results.filter((r) => r.ok).length;
  return { result: { action: pinned.action.type, results, succeeded, failed: results.length - succeeded }, headers };
}

/** Pinned selections past their retention go (their pipeline records go with theirs). */
export async function pruneFleetRecords(db: Db, now: number): Promise<void> {
  const cutoff = now - FLEET_RECORD_RETENTION_MS;
  await db
    .deleteFrom('fleet_action_results')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('fleet_actions')
          .select('fleet_actions.tenant_id')
          .whereRef('fleet_actions.tenant_id', '=', 'fleet_action_results.tenant_id')
          .whereRef('fleet_actions.idempotency_key', '=', 'fleet_action_results.idempotency_key')
          .where('fleet_actions.created_at', '<=', cutoff),
      ),
    )
    .execute();
  await db.deleteFrom('fleet_actions').where('created_at', '<=', cutoff).execute();
}
