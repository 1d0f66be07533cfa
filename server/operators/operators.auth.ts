// The operator realm: a bearer from the operators table, accepted by the operator routes only. A
// project or account bearer is unknown here, and an operator bearer is unknown everywhere else.
import type { Authenticator, Principal } from '../http/route';
import { safeEqual, sha256Hex } from '../keys';
import { problem } from '../problem';

export interface OperatorPrincipal extends Principal {
  realm: 'operator';
  operatorId: string;
}

export const operatorBearer: Authenticator<OperatorPrincipal> = {
  realm: 'operator',
  async authenticate(ctx) {
    const refused = problem('unauthorized', 'operator routes need Authorization: Bearer <operator token>', {
      headers: { 'WWW-Authenticate': 'Bearer realm="marquee-operator"' },
    });
    if (ctx.req.headers.cookie !== undefined) throw problem('forbidden', 'operator routes take no cookie');
    const match = /^Bearer (mq_op_[A-Za-z0-9_-]{43})$/.exec(ctx.req.headers.authorization ?? '');
    if (!match) throw refused;
    const hash = sha256Hex(match[1]!);
    const row = await ctx.services.store.db
      .selectFrom('operators')
      .select(['id', 'token_hash', 'revoked_at'])
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || !safeEqual(row.token_hash, hash)) throw refused;
    return { realm: 'operator', scope: `operator:${row.id}`, operatorId: row.id };
  },
};
