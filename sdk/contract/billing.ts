// Billing (Model P): the balance and the statement of the credit ledger, in millicredits written as
// canonical decimal strings (no leading zeros, no plus sign, "-" only before a non-zero value).
import { z } from 'zod';

export const STATEMENT_DEFAULT_LIMIT = 50;
export const STATEMENT_MAX_LIMIT = 200;

export interface BillingBalance {
  /** The ledger balance (may be negative down to the floor). */
  balance_millicredits: string;
  /** What the plan grants each UTC month. */
  included_millicredits: string;
  /** The lowest balance admission allows (spec: -1,000,000 credits until 2027-01-01, then 0). */
  floor_millicredits: string;
  /** When the next monthly grant is added. */
  next_grant_at: string;
  /** False while card, tax and cash-out rails are unavailable. */
  rails_available: false;
}

export interface StatementEntry {
  /** UTC day `YYYY-MM-DD`. */
  day: string;
  /** What moved credits: `api_request`, `included_grant`, `media_generation`, `operator_grant`, … */
  kind: string;
  /** Signed sum of the day's entries of this kind (debits negative). */
  amount_millicredits: string;
  count: number;
}

export interface BillingStatement {
  /** Newest day first; within a day, by kind. */
  items: StatementEntry[];
  next_cursor: string | null;
}

export const BillingStatementQuery = z.strictObject({
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(STATEMENT_MAX_LIMIT).optional(),
});

/** Canonical decimal text of an integer count of millicredits. */
export function millicredits(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`not a whole number of millicredits: ${value}`);
  return String(value === 0 ? 0 : value);
}
