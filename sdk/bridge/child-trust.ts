// Which parent a bridge child answers: the player its release host names (asked once, see
// trusted-parent.ts), pinned by the first valid handshake from that origin. Until the release host
// has answered, the latest handshake waits (the parent repeats it until it hears back).
import { decodeParentHandshake, HANDSHAKE_PROTOCOL, type BridgeErrorCode, type ChildHandshake } from './protocol';

/** Why a message was ignored (the child's onDiagnostic). */
export type Diagnose = (code: BridgeErrorCode, detail: string) => void;

export interface PinnedParent {
  origin: string;
  /** The handshake's challenge: every later message from the parent carries it as its nonce. */
  challenge: string;
}

export class ParentTrust {
  /** undefined while the release host is asked which player it trusts; null when it named none. */
  private trusted: string | null | undefined;
  /** A handshake that arrived before that answer (the latest only). */
  private held: MessageEvent | null = null;
  private pin: PinnedParent | null = null;

  constructor(
    hasParent: boolean,
    private readonly diagnose: Diagnose,
  ) {
    this.trusted = hasParent ? undefined : null;
  }

  get pinned(): PinnedParent | null {
    return this.pin;
  }

  /** The release host has not answered yet. */
  get asking(): boolean {
    return this.trusted === undefined;
  }

  /** No parent, or the release host named none: the child stays inert for good. */
  get refused(): boolean {
    return this.trusted === null;
  }

  /** The release host's answer; returns the handshake held meanwhile, to be handled now. */
  settle(origin: string | null): MessageEvent | null {
    this.trusted = origin;
    const held = this.held;
    this.held = null;
    return held;
  }

  /** Drops a held handshake (the child was destroyed). */
  forget(): void {
    this.held = null;
  }

  /** A handshake-like message from the parent window: the reply to post to the pinned origin, or null. */
  onHandshake(event: MessageEvent): ChildHandshake | null {
    const handshake = decodeParentHandshake(event.data);
    if (!handshake.ok) return this.ignore(handshake.code, handshake.detail);
    if (event.origin === 'null' || event.origin === '*')
      return this.ignore('wildcard_origin', 'a parent with an opaque origin cannot be pinned');
    if (this.trusted === undefined) {
      this.held = event;
      return null;
    }
    if (this.trusted === null || event.origin !== this.trusted)
      return this.ignore('untrusted_origin', `${event.origin} is not the player of this release host`);
    if (this.pin && (this.pin.origin !== event.origin || this.pin.challenge !== handshake.value.challenge))
      return this.ignore('invalid_handshake', 'the parent is already pinned; only the first handshake counts');
    this.pin = { origin: event.origin, challenge: handshake.value.challenge };
    // Repeats of the winning handshake get the same answer (the parent retries until it hears one).
    return {
      protocol: HANDSHAKE_PROTOCOL,
      kind: 'child.handshake',
      challenge: this.pin.challenge,
      parent_origin: this.pin.origin,
    };
  }

  private ignore(code: BridgeErrorCode, detail: string): null {
    this.diagnose(code, detail);
    return null;
  }
}
