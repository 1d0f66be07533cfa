import { describe, expect, it } from 'vitest';
import type { ScreenHealth } from '../../../sdk/contract/screen-health';
import { healthLine } from './health-line';

const NOW = Date.parse('2026-11-25T12:00:00Z');
const health = (change: Partial<ScreenHealth>): ScreenHealth => ({
  presence: 'online',
  last_seen_at: '2026-11-25T12:00:00Z',
  offline_since: null,
  player: null,
  host: null,
  now_playing: null,
  watchdog: { recoveries: 0, last_recovery_at: null, last_reason: null },
  screenshot: { state: 'idle' },
  ...change,
});

describe('healthLine', () => {
  it('names the player and its recoveries, and since when an offline screen is offline', () => {
    expect(healthLine(health({ player: { kind: 'kiosk', version: '1.2.0' } }), NOW)).toBe('kiosk 1.2.0');
    expect(
      healthLine(
        health({
          presence: 'offline',
          offline_since: '2026-11-25T11:55:00Z',
          player: { kind: 'browser', version: null },
          watchdog: { recoveries: 2, last_recovery_at: null, last_reason: null },
        }),
        NOW,
      ),
    ).toBe('offline since 5 min ago · browser · 2 recoveries');
  });

  it('is empty for a screen whose player never reported', () => {
    expect(healthLine(health({}), NOW)).toBe('');
  });
});
