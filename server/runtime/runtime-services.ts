// Per-server runtime state that lives in process memory: presence and egress budgets (a shared
// implementation replaces both when replicas share a store).
import type { Services } from '../services';
import { ByteBudgets, EGRESS_LIMITS, type EgressLimits } from './egress-budgets';
import { RuntimePresence } from './presence';

interface RuntimeState {
  presence: RuntimePresence;
  egress: ByteBudgets;
  limits: EgressLimits;
}

const states = new WeakMap<Services, RuntimeState>();

function stateOf(services: Services): RuntimeState {
  let state = states.get(services);
  if (!state)
    states.set(
      services,
      (state = {
        presence: new RuntimePresence(services.clock),
        egress: new ByteBudgets(),
        limits: { ...EGRESS_LIMITS },
      }),
    );
  return state;
}

export function presenceOf(services: Services): RuntimePresence {
  return stateOf(services).presence;
}

export function egressOf(services: Services): { budgets: ByteBudgets; limits: EgressLimits } {
  const state = stateOf(services);
  return { budgets: state.egress, limits: state.limits };
}

/** Changes one server's egress limits (tests spend them with small objects). */
export function tuneEgressLimits(services: Services, limits: Partial<EgressLimits>): void {
  Object.assign(stateOf(services).limits, limits);
}
