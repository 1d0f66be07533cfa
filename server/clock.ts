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

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The UTC day (YYYY-MM-DD) of `now`, as the daily ledgers key it (credits, egress). */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}
