import { describe, expect, it } from 'vitest';
import { isIanaZoneName } from './time-zones';

describe('IANA zone names', () => {
  it('accepts canonical names and aliases spelled as the tz database spells them', () => {
    for (const zone of [
      'Europe/Berlin',
      'America/Los_Angeles',
      'Asia/Kolkata',
      'Asia/Calcutta',
      'US/Pacific',
      'EST5EDT',
      'GMT',
      'UTC',
      'Etc/UTC',
      'America/Argentina/ComodRivadavia',
    ]) {
      expect(isIanaZoneName(zone), zone).toBe(true);
    }
  });

  it('refuses miscased names, aliases included, offsets and unknown zones', () => {
    for (const zone of [
      'europe/berlin',
      'us/pacific',
      'Us/Pacific',
      'est5edt',
      'gmt',
      'utc',
      'etc/utc',
      'asia/calcutta',
      '+05:00',
      'UTC+2',
      'Mars/Olympus',
      'Factory',
      '',
    ]) {
      expect(isIanaZoneName(zone), zone).toBe(false);
    }
  });
});
