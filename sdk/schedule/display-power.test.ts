import { describe, expect, it } from 'vitest';
import type { DisplayState } from '../contract/fleet';
import { isDisplayOn, nextDisplaySwitch } from './display-power';

const office: DisplayState = {
  power: null,
  schedule: { on: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '07:00', end: '19:00' }] },
};
const at = (iso: string) => Date.parse(iso);

describe('display power', () => {
  it('is on without any display state', () => {
    expect(isDisplayOn(null, at('2026-11-23T03:00:00Z'), 'Europe/Berlin')).toBe(true);
  });

  it('follows the weekly schedule in the screen time zone: off at night and at weekends', () => {
    expect(isDisplayOn(office, at('2026-11-23T10:00:00Z'), 'Europe/Berlin')).toBe(true); // Monday 11:00
    expect(isDisplayOn(office, at('2026-11-23T21:00:00Z'), 'Europe/Berlin')).toBe(false); // Monday 22:00
    expect(isDisplayOn(office, at('2026-11-22T10:00:00Z'), 'Europe/Berlin')).toBe(false); // Sunday
    expect(nextDisplaySwitch(office, at('2026-11-23T10:00:00Z'), 'Europe/Berlin')).toBe(at('2026-11-23T18:00:00Z'));
  });

  it('lets an override beat the schedule until it is cleared', () => {
    expect(isDisplayOn({ ...office, power: 'off' }, at('2026-11-23T10:00:00Z'), 'Europe/Berlin')).toBe(false);
    expect(isDisplayOn({ ...office, power: 'on' }, at('2026-11-23T21:00:00Z'), 'Europe/Berlin')).toBe(true);
    expect(nextDisplaySwitch({ ...office, power: 'on' }, at('2026-11-23T21:00:00Z'), 'Europe/Berlin')).toBeNull();
  });

  it('stays on when the schedule cannot be judged (no time zone)', () => {
    expect(isDisplayOn(office, at('2026-11-23T21:00:00Z'), undefined)).toBe(true);
  });
});
