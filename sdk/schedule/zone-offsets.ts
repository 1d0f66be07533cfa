// Civil time in an IANA zone, DST-exact: a zone's UTC offsets as piecewise-constant segments
// (found once per UTC day and cached), so converting between instants and wall-clock readings is
// arithmetic instead of one Intl lookup per question.
import { IANAZone } from 'luxon';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/**
 * Offsets lie within −12 h … +14 h today, but the tz database's local mean times reach −15:56:08
 * (Manila before 1845) and +14:58:47 (Sitka before 1867), and from/until may name such dates.
 */
const OFFSET_MARGIN_MS = 16 * HOUR_MS;
/** Cached UTC days per zone before the cache starts over (bounded memory on a 24/7 screen). */
const MAX_CACHED_DAYS = 4096;

interface Segment {
  from: number;
  to: number;
  /** Offset in ms: civil = instant + offset. */
  offset: number;
}

export class ZoneOffsets {
  private readonly days = new Map<number, Segment[]>();
  private readonly zone: IANAZone;

  private constructor(readonly name: string) {
    this.zone = IANAZone.create(name);
  }

  private static readonly byName = new Map<string, ZoneOffsets>();

  /** The offsets of a known IANA zone; throws RangeError for an unknown one. */
  static of(name: string): ZoneOffsets {
    let zone = ZoneOffsets.byName.get(name);
    if (!zone) {
      if (!IANAZone.isValidZone(name)) throw new RangeError(`unknown time zone "${name}"`);
      zone = new ZoneOffsets(name);
      ZoneOffsets.byName.set(name, zone);
    }
    return zone;
  }

  /** The wall-clock reading at `instant`, as milliseconds of a naive (UTC-labelled) timeline. */
  civil(instant: number): number {
    return instant + this.offsetAt(instant);
  }

  /**
   * The earliest instant at which the wall clock reads `civil` or later. In a spring-forward gap
   * that is the end of the gap; in a fall-back overlap it is the first occurrence.
   */
  instantOf(civil: number): number {
    let best = Infinity;
    for (const s of this.segmentsAround(civil)) {
      const candidate = Math.max(s.from, civil - s.offset);
      if (candidate < s.to && candidate < best) best = candidate;
    }
    return best;
  }

  private offsetAt(instant: number): number {
    const segments = this.day(Math.floor(instant / DAY_MS));
    for (const s of segments) if (instant < s.to) return s.offset;
    return segments.at(-1)!.offset;
  }

  private segmentsAround(civil: number): Segment[] {
    const first = Math.floor((civil - OFFSET_MARGIN_MS) / DAY_MS);
    const last = Math.floor((civil + OFFSET_MARGIN_MS) / DAY_MS);
    const out: Segment[] = [];
    for (let d = first; d <= last; d++) out.push(...this.day(d));
    return out;
  }

  private raw(instant: number): number {
    return this.zone.offset(instant) * MINUTE_MS;
  }

  /** Offsets over one UTC day, sampled hourly and each change refined to the millisecond. */
  private day(index: number): Segment[] {
    const cached = this.days.get(index);
    if (cached) return cached;
    const start = index * DAY_MS;
    const end = start + DAY_MS;
    const segments: Segment[] = [];
    let from = start;
    let offset = this.raw(start);
    for (let t = start + HOUR_MS; t <= end; t += HOUR_MS) {
      const next = this.raw(t);
      if (next === offset) continue;
      let lo = t - HOUR_MS;
      let hi = t;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (this.raw(mid) === offset) lo = mid;
        else hi = mid;
      }
      if (hi >= end) break; // the change belongs to the next day
      segments.push({ from, to: hi, offset });
      from = hi;
      offset = this.raw(hi);
    }
    segments.push({ from, to: end, offset });
    if (this.days.size >= MAX_CACHED_DAYS) this.days.clear();
    this.days.set(index, segments);
    return segments;
  }
}
