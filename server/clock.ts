// Time is injected so expiries, budgets, schedules and the credit floor date are testable.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; starts at the real time unless given one. */
export class TestClock implements Clock {
  private current: number;
  constructor(start: number | string = Date.now()) {
    this.current = typeof start === 'string' ? Date.parse(start) : start;
  }
  now(): number {
    return this.current;
  }
  set(at: number | string): void {
    this.current = typeof at === 'string' ? Date.parse(at) : at;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * The last instant the wire can name: its instants (RFC 3339) have four year digits, and
 * `toISOString` writes a later one as `+010000-…`, which every reader of ours refuses.
 */
export const LAST_WIRE_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

const DAY_MS = 86_400_000;
/** The last day utcDay answered (a pure memo: the same for every server). */
let lastDay = { from: Number.NaN, text: '' };

/** The UTC day (YYYY-MM-DD) of `now`, as the daily ledgers key it (credits, egress). */
export function utcDay(now: number): string {
  // Asked for every metered request and every delivery: the day's text is kept until the day ends.
  if (now >= lastDay.from && now < lastDay.from + DAY_MS) return lastDay.text;
  const text = new Date(now).toISOString().slice(0, 10);
  lastDay = { from: Math.floor(now / DAY_MS) * DAY_MS, text };
  return text;
}
