// How the pairing screen says when its code is replaced: in the unit a person reads at a glance.

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** Below this, minutes: "in about 45 minutes" reads better than "in about 1 hour". */
const MINUTES_BELOW_MS = 90 * MINUTE_MS;
/** Below this, hours; from here on, days (a 72-hour code reads "in about 3 days"). */
const HOURS_BELOW_MS = 2 * DAY_MS;

function count(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** "in about 5 minutes", "in about 20 hours", "in about 3 days"; never less than a minute. */
export function codeReplacedIn(msLeft: number): string {
  if (msLeft < MINUTES_BELOW_MS) return `in about ${count(Math.max(1, Math.round(msLeft / MINUTE_MS)), 'minute')}`;
  if (msLeft < HOURS_BELOW_MS) return `in about ${count(Math.round(msLeft / HOUR_MS), 'hour')}`;
  return `in about ${count(Math.round(msLeft / DAY_MS), 'day')}`;
}
