// A screen card's health in one short line (the status beside it already says when it was last seen).
import type { ScreenHealth } from '../../../sdk/contract/screen-health';
import { timeAgo } from '../app/format';

/** Which player, since when offline (the status says when it was last seen), its recoveries: one short line. */
export function healthLine(health: ScreenHealth, now: number): string {
  const parts: string[] = [];
  if (health.offline_since) parts.push(`offline since ${timeAgo(health.offline_since, now)}`);
  if (health.player) parts.push(`${health.player.kind}${health.player.version ? ` ${health.player.version}` : ''}`);
  if (health.watchdog.recoveries > 0) parts.push(`${health.watchdog.recoveries} recoveries`);
  return parts.join(' · ');
}
