// `ready()` of a bridge child: one promise for the app, resolved once the player acknowledged the
// first activation's ready; from the first ready() on, every activation announces itself again.
import type { BridgeContext } from './child-context';
import type { Diagnose } from './child-trust';
import type { BridgeError } from './protocol';

export class Readiness {
  private promise: Promise<BridgeContext> | null = null;
  private waiter: { resolve(context: BridgeContext): void; reject(error: BridgeError): void } | null = null;

  constructor(
    /** Sends `ready` for the current activation and resolves with the player's acknowledgement. */
    private readonly sendReady: () => Promise<unknown>,
    private readonly diagnose: Diagnose,
  ) {}

  /** The app's ready(): the one promise, announcing the current activation if there is one. */
  start(current: BridgeContext | null): Promise<BridgeContext> {
    if (!this.promise) {
      this.promise = new Promise<BridgeContext>((resolve, reject) => {
        this.waiter = { resolve, reject };
      });
      if (current) this.announce(current);
    }
    return this.promise;
  }

  /** A context was accepted: once the app asked for ready(), the player hears it for this activation too. */
  activated(current: BridgeContext): void {
    if (this.promise) this.announce(current);
  }

  /** The bridge can never become ready (no trusted player, or destroyed). */
  fail(error: BridgeError): void {
    this.waiter?.reject(error);
    this.waiter = null;
  }

  private announce(current: BridgeContext): void {
    this.sendReady().then(
      () => {
        this.waiter?.resolve(current);
        this.waiter = null;
      },
      (error: BridgeError) => {
        if (this.waiter) this.waiter.reject(error);
        else this.diagnose('ack_timeout', `ready for generation ${current.generation}: ${error.message}`);
        this.waiter = null;
      },
    );
  }
}
