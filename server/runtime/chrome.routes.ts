// GET /runtime/v1/chrome: the stage chrome of this runtime session, beside (never inside) the
// manifest. Version 1 has no banner; the shape is here so a later banner is an additive change.
import type { RuntimeChrome } from '../../sdk/contract/runtime';
import { query, reply } from '../http/route';
import { runtimeCookie } from '../pairing/pairing.auth';

const CHROME: RuntimeChrome = { schema_version: 1, banner: null };

export const getChrome = query({ auth: runtimeCookie }, async () =>
  reply.ok(CHROME, { headers: { 'Cache-Control': 'private, no-store' } }),
);
