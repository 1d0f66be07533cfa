// Feedback: bug reports and feature requests a project sends to the installation's operators. A
// project reads back its own, per kind; the operators read every project's in one inbox.
import type {
  Feedback,
  FeedbackKind,
  FeedbackList,
  FeedbackSubmission,
  OperatorFeedback,
  OperatorFeedbackList,
} from '../../sdk/contract/feedback';
import { isoTime } from '../clock';
import { newId } from '../keys';
import type { Db, Work } from '../store/store';
import type { FeedbackTable } from './feedback.tables';
import { newestFirstPage } from '../keyset-cursor';

export const OPERATOR_FEEDBACK_DEFAULT_LIMIT = 50;
/** A project's own list is short by nature (the submit budget bounds it); it still has a ceiling. */
export const PROJECT_FEEDBACK_LIST_MAX = 200;

function view(row: FeedbackTable): Feedback {
  return {
    id: row.id,
    kind: row.kind,
    title: row.title,
    body: row.body,
    context: JSON.parse(row.context) as Feedback['context'],
    created_at: isoTime(Number(row.created_at)),
  };
}

export async function submitFeedback(
  work: Work,
  input: { tenantId: string; kind: FeedbackKind; submission: FeedbackSubmission },
  now: number,
): Promise<Feedback> {
  const row: FeedbackTable = {
    id: newId('fb'),
    tenant_id: input.tenantId,
    kind: input.kind,
    title: input.submission.title,
    body: input.submission.body,
    context: JSON.stringify(input.submission.context ?? {}),
    created_at: now,
  };
  await work.db.insertInto('feedback').values(row).execute();
  return view(row);
}

/** The project's own submissions of one kind, newest first. */
export async function listFeedback(db: Db, tenantId: string, kind: FeedbackKind): Promise<FeedbackList> {
  const rows = await db
    .selectFrom('feedback')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', kind)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(PROJECT_FEEDBACK_LIST_MAX)
    .execute();
  return { items: rows.map(view) };
}

/** Every project's submissions, newest first, a page at a time (the operators' inbox). */
export async function operatorInbox(
  db: Db,
  query: { kind?: FeedbackKind; cursor?: string; limit?: number },
): Promise<OperatorFeedbackList> {
  const limit = query.limit ?? OPERATOR_FEEDBACK_DEFAULT_LIMIT;
  let q = db.selectFrom('feedback').selectAll();
  if (query.kind) q = q.where('kind', '=', query.kind);
  const { rows: page, next_cursor } = await newestFirstPage(q, query.cursor, limit);
  const items: OperatorFeedback[] = page.map((row) => ({ ...view(row), project_id: row.tenant_id }));
  return { items, next_cursor };
}
