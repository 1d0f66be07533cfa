// Page visibility rules (write shape, also carried verbatim in the manifest). Evaluated by the
// player in the screen's time zone; the server validates the shape and requires a screen timezone.
import { z } from 'zod';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const VISIBILITY_MAX_WINDOWS = 16;

const CIVIL_DATETIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)$/;
const CLOCK_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** `YYYY-MM-DDTHH:MM` with no offset, and a real calendar date. */
export const CivilDateTime = z
  .string()
  .regex(CIVIL_DATETIME, 'must be YYYY-MM-DDTHH:MM (civil time, no offset)')
  .refine((s) => {
    const [, y, m, d] = CIVIL_DATETIME.exec(s)!.map(Number);
    const date = new Date(Date.UTC(y!, m! - 1, d!));
    return date.getUTCFullYear() === y && date.getUTCMonth() === m! - 1 && date.getUTCDate() === d;
  }, 'is not a real date');

export const ClockTime = z.string().regex(CLOCK_TIME, 'must be HH:MM');

export const VisibilityWindow = z
  .strictObject({
    days: z
      .array(z.enum(WEEKDAYS))
      .min(1)
      .max(7)
      .refine((days) => new Set(days).size === days.length, 'days must be unique'),
    start: ClockTime.optional(),
    end: ClockTime.optional(),
  })
  .refine((w) => (w.start === undefined) === (w.end === undefined), 'give both start and end, or neither (all day)');
export type VisibilityWindow = z.infer<typeof VisibilityWindow>;

export const Visibility = z
  .strictObject({
    enabled: z.boolean(),
    from: CivilDateTime.optional(),
    until: CivilDateTime.optional(),
    windows: z.array(VisibilityWindow).min(1).max(VISIBILITY_MAX_WINDOWS).optional(),
  })
  .refine((v) => v.from === undefined || v.until === undefined || v.from < v.until, 'from must be before until')
  .refine(
    (v) => !v.enabled || v.from !== undefined || v.until !== undefined || v.windows !== undefined,
    'an enabled rule needs from, until or windows',
  );
export type Visibility = z.infer<typeof Visibility>;
