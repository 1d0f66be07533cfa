// The typed control-plane client. Each feature's routes live in their own small module over the
// shared transport; adding a feature is one module and one line below.
import { operationRoutes } from './operations';
import { statusRoutes } from './status';
import { accountRoutes, enrollRoute, projectRoutes } from './tenants';
import { ClientTransport, type ClientOptions } from './transport';

export function createMarqueeClient(options: ClientOptions) {
  const transport = new ClientTransport(options);
  return {
    transport,
    /** Use this bearer for the calls that follow (e.g. the token enrollment returned). */
    useToken: (token: string | undefined) => transport.setToken(token),
    status: statusRoutes(transport),
    enroll: enrollRoute(transport),
    account: accountRoutes(transport),
    project: projectRoutes(transport),
    operations: operationRoutes(transport),
    // Later features plug in here: applications (upload of a packed archive), media (declare →
    // signed PUT → commit → wait), playlists, screens, events, kv.
  };
}

export type MarqueeClient = ReturnType<typeof createMarqueeClient>;

export { MarqueeNetworkError, MarqueeProblem, type Credits, type FieldProblem, type ProblemDocument } from './problem';
export { OperationFailedError, OperationTimeoutError, type WaitOptions } from './operations';
export { ClientTransport, ifMatch, newIdempotencyKey, revisionOf, type CallOptions, type ClientOptions, type MarqueeResult, type RequestSpec } from './transport';
