// A screen's state in words and a coloured dot: Online, Offline (last seen …), Waiting for its player,
// Archived (an archived screen's player is refused, whatever its stream last said).
import type { Screen } from '../../../sdk/contract/screens';
import { lastSeenText } from './screen-facts';

export function statusOf(screen: Screen, now: number): { tone: 'online' | 'offline' | 'pending'; text: string } {
  if (screen.state === 'pairing_pending') return { tone: 'pending', text: 'Waiting for its player' };
  if (screen.state === 'archived') return { tone: 'offline', text: 'Archived' };
  if (screen.online) return { tone: 'online', text: 'Online' };
  const seen = lastSeenText(screen, now);
  return { tone: 'offline', text: seen === 'never' ? 'Offline, never seen' : `Offline, last seen ${seen}` };
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
