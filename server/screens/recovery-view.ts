// The `recovery_pending` member of a Screen, read from the screen row's column (kept apart from
// recovery.ts so the screen view does not import the recovery rules).
import type { RecoveryPending } from '../../sdk/contract/screens';
import { isoTime } from '../clock';

/** The column's JSON: the offer and what the owner may see of the offering device. */
export interface RecoveryPendingColumn {
  offer_id: string;
  offered_at: number;
  expires_at: number;
  host: RecoveryPending['host'];
}

/** The view of a pending offer, or nothing once it lapsed (an unclaimed native pairing lasts 72 h). */
export function recoveryPendingView(column: string | null, now: number): { recovery_pending?: RecoveryPending } {
  if (column === null) return {};
  const offer = JSON.parse(column) as RecoveryPendingColumn;
  if (offer.expires_at <= now) return {};
  return {
    recovery_pending: {
      offered_at: isoTime(offer.offered_at),
      expires_at: isoTime(offer.expires_at),
      host: offer.host,
    },
  };
}
