// Who a runtime budget is counted for. A screen's public URL is meant to be opened in other
// browsers, so anonymous (public-id) sessions must not spend what the paired player needs: the
// paired player draws on the screen's own budget, anonymous viewers on one per client IP and
// screen. Per IP rather than per session: a viewer may open a new anonymous session every second.
import { clientIp } from '../http/client-ip';
import type { AnyContext } from '../http/route';
import type { RuntimePrincipal } from '../pairing/pairing.auth';

/** The budget key of a runtime caller: `<screen>` for the paired player, `<screen>:public:<ip>` for a viewer. */
export function runtimeBudgetKey(ctx: AnyContext & { principal: RuntimePrincipal }): string {
  const { principal } = ctx;
  return principal.paired ? principal.screenId : `${principal.screenId}:public:${clientIp(ctx)}`;
}
