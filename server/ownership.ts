// Whose is what a path names. The route table (routes.ts) gives every route whose path names a
// tenant's resource a `resource` check from here; the pipeline runs it before refusing the request
// itself (a bad body, query, If-Match or Idempotency-Key, or a path value or header the handler
// refuses, D-404), so another tenant's id answers not_found
// whatever else is wrong with the request (D-322). Handlers still resolve their resource as before;
// this only decides the order of refusals.
import type { RouteEntry } from './http/dispatch';
import type { AnyContext } from './http/route';
import { problem } from './problem';
import type { Database } from './store/schema';

/** A tenant-owned table, the column a path parameter names a row by, and which parameter. */
interface Owned {
  path: RegExp;
  table: keyof Database &
    (
      | 'screens'
      | 'playlists'
      | 'media'
      | 'media_uploads'
      | 'applications'
      | 'operations'
      | 'invitations'
      | 'credentials'
    );
  column: 'id' | 'issuance_id';
  param: string;
}

/** Most specific first: the first pattern a path matches decides. */
const OWNED: Owned[] = [
  { path: /\/media\/uploads\/:id(\/|$)/, table: 'media_uploads', column: 'id', param: 'id' },
  { path: /\/media\/:id(\/|$)/, table: 'media', column: 'id', param: 'id' },
  { path: /\/screens?\/:id(\/|$)/, table: 'screens', column: 'id', param: 'id' },
  { path: /\/playlists?\/:id(\/|$)/, table: 'playlists', column: 'id', param: 'id' },
  { path: /\/applications\/:id(\/|$)/, table: 'applications', column: 'id', param: 'id' },
  { path: /\/operations\/:id(\/|$)/, table: 'operations', column: 'id', param: 'id' },
  { path: /\/invitations\/:id(\/|$)/, table: 'invitations', column: 'id', param: 'id' },
  { path: /\/credential-issuances\/:id(\/|$)/, table: 'credentials', column: 'issuance_id', param: 'id' },
];

/** The tenant a caller acts for, when it is one (bearers and dashboard sessions carry it). */
function tenantOf(ctx: AnyContext): string | undefined {
  const tenantId = (ctx.principal as { tenantId?: unknown } | undefined)?.tenantId;
  return typeof tenantId === 'string' ? tenantId : undefined;
}

/** Throws not_found unless a row of that table with the named id belongs to the caller's tenant. */
function ownedCheck(owned: Owned): (ctx: AnyContext) => Promise<void> {
  return async (ctx) => {
    const tenantId = tenantOf(ctx);
    const id = ctx.params[owned.param];
    if (tenantId === undefined || id === undefined) return;
    const row = await ctx.services.store.db
      .selectFrom(owned.table)
      .select('tenant_id')
      .where(owned.column, '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!row) throw problem('not_found', `${owned.table.replace(/_/g, ' ').replace(/s$/, '')} ${id} not found`);
  };
}

/** The table with a `resource` check on every route whose path names a tenant's resource. */
export function withOwnership(table: RouteEntry[]): RouteEntry[] {
  return table.map((entry) => {
    const owned = OWNED.find((o) => o.path.test(entry.path));
    if (!owned || !entry.route.policy.auth || entry.route.policy.resource) return entry;
    return { ...entry, route: { ...entry.route, policy: { ...entry.route.policy, resource: ownedCheck(owned) } } };
  });
}
