// What a bridge child knows of its activation: the context the player sent last (on the wire and
// as the app sees it), the rules a new context must keep, and viewport changes within it.
import type { BridgeCapabilities, BridgeErrorCode, ContextPayload, Size } from './protocol';

/** What the app learns about where it runs; a new one arrives with every activation. */
export interface BridgeContext {
  readonly applicationId: string;
  readonly releaseId: string;
  readonly placementId: string;
  readonly screenId?: string;
  /** Activation counter: each time the page holding this placement comes on glass. */
  readonly generation: number;
  readonly capabilities: Readonly<BridgeCapabilities>;
  /** The player viewport and this placement's box, in CSS pixels. */
  readonly viewport: Readonly<Size>;
  readonly placement: Readonly<Size>;
}

export interface ViewportChange {
  readonly viewport: Readonly<Size>;
  readonly placement: Readonly<Size>;
}

type Refusal = { ok: false; code: BridgeErrorCode; detail: string };
const refuse = (code: BridgeErrorCode, detail: string): Refusal => ({ ok: false, code, detail });

export function freezeContext(p: ContextPayload): BridgeContext {
  const context: BridgeContext = {
    applicationId: p.application_id,
    releaseId: p.release_id,
    placementId: p.placement_id,
    ...(p.screen_id !== undefined ? { screenId: p.screen_id } : {}),
    generation: p.generation,
    capabilities: Object.freeze({ ...p.capabilities }),
    viewport: Object.freeze({ ...p.viewport }),
    placement: Object.freeze({ ...p.placement }),
  };
  return Object.freeze(context);
}

export class CurrentContext {
  /** The last accepted context as sent (its nonce and generation go on every request); null while inert. */
  wire: ContextPayload | null = null;
  /** The same, as the app sees it. */
  app: BridgeContext | null = null;

  /**
   * Takes a context from the pinned parent (`envelopePlacement`: the envelope's placement_id). A
   * frame keeps its placement, player, application and release; generations never go back.
   * `reactivated`: the generation moved on, so requests of the previous activation are void.
   */
  accept(
    envelopePlacement: string,
    pinnedOrigin: string,
    p: ContextPayload,
  ): { ok: true; context: BridgeContext; reactivated: boolean } | Refusal {
    if (p.placement_id !== envelopePlacement)
      return refuse('invalid_placement', 'context placement_id differs from the envelope');
    if (p.player_origin !== pinnedOrigin)
      return refuse('invalid_player_origin', 'player_origin is not the pinned parent origin');
    const current = this.wire;
    if (current) {
      if (p.generation < current.generation) return refuse('invalid_generation', 'context generation went backwards');
      if (p.application_id !== current.application_id)
        return refuse('invalid_application', 'the application of a frame cannot change');
      if (p.release_id !== current.release_id) return refuse('invalid_release', 'the release of a frame cannot change');
    }
    this.wire = p;
    this.app = freezeContext(p);
    return { ok: true, context: this.app, reactivated: current !== null && p.generation !== current.generation };
  }

  /** A viewport.changed of the current activation (call once a context was accepted). */
  resize(generation: number, viewport: Size, placement: Size): { ok: true; change: ViewportChange } | Refusal {
    const current = this.wire!;
    if (generation !== current.generation)
      return refuse('invalid_generation', 'viewport change for another activation');
    this.wire = { ...current, viewport, placement };
    this.app = freezeContext(this.wire);
    return { ok: true, change: Object.freeze({ viewport: this.app.viewport, placement: this.app.placement }) };
  }
}
