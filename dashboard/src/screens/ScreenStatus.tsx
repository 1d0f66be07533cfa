// A screen's state in words and a coloured dot: Online, Offline (last seen …), Waiting for its player.
import type { Screen } from '../../../sdk/contract/screens';
import { timeAgo } from '../app/format';

export function statusOf(screen: Screen, now: number): { tone: 'online' | 'offline' | 'pending'; text: string } {
  if (screen.state === 'pairing_pending') return { tone: 'pending', text: 'Waiting for its player' };
  if (screen.online) return { tone: 'online', text: 'Online' };
  return {
    tone: 'offline',
    text: screen.last_online_at ? `Offline, last seen ${timeAgo(screen.last_online_at, now)}` : 'Offline, never seen',
  };
}

export function ScreenStatus({ screen, now }: { screen: Screen; now: number }) {
  const status = statusOf(screen, now);
  return (
    <span className={`status ${status.tone}`} data-testid="screen-status">
      <span className="dot" aria-hidden="true" />
      {status.text}
    </span>
  );
}
