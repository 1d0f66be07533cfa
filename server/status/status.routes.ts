// Service status: liveness, readiness (degraded list and the spec's not-ready problems), version,
// and the public capabilities document.
import { API_VERSION, LIMITS, PROTOCOL_VERSION } from '../../sdk/contract/limits';
import pkg from '../../package.json' with { type: 'json' };
import { problem } from '../problem';
import { query, reply } from '../http/route';

export const health = query({}, async () => reply.ok({ status: 'alive' }));

export const ready = query({}, async (ctx) => {
  const { lifecycle, store, blobs, clock, config } = ctx.services;
  if (lifecycle.state === 'draining') {
    // spec /.ready: every readiness problem is 503 in Model A; only Model P names 421 server_draining.
    const detail = 'this host is draining; retry on another host';
    throw config.model === 'A' ? problem('not_ready', detail, { retryAfter: 1 }) : problem('server_draining', detail);
  }
  if (lifecycle.state === 'starting') throw problem('not_ready', 'the service is still starting');
  // The database answers before its schema is read: one that is down is dependency_unavailable.
  if (!(await store.ping())) throw problem('dependency_unavailable', 'the database does not answer');
  const schema = await store.schemaStatus(clock.now());
  if (schema.state === 'incompatible')
    throw problem('schema_incompatible', `database schema incompatible: ${schema.detail}`);
  if (!(await blobs.writable())) throw problem('dependency_unavailable', 'the blob store is not writable');
  const degraded: string[] = [];
  if (schema.state === 'drifting') degraded.push('schema');
  return reply.ok({ status: 'ready', degraded }, { headers: { 'Cache-Control': 'no-store' } });
});

export const version = query({}, async (ctx) =>
  reply.ok({
    version: pkg.version,
    commit: ctx.services.config.commit,
    api_version: API_VERSION,
    protocol_version: PROTOCOL_VERSION,
  }),
);

export const capabilities = query({}, async (ctx) =>
  reply.ok({
    api_version: API_VERSION,
    protocol_version: PROTOCOL_VERSION,
    ...LIMITS,
    features: ctx.services.features,
  }),
);
