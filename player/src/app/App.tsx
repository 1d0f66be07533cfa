// The shell: the pairing screen, the stage, or a calm card, and the status mark above them all.
import { useStore } from 'zustand';
import { PairingScreen } from '../pairing/PairingScreen';
import type { PlayerController } from '../runtime/player-controller';
import type { PlayerStore } from '../state/player-store';
import { Stage } from './Stage';

export function App({
  store,
  controller,
  pairingHintUrl,
}: {
  store: PlayerStore;
  controller: PlayerController;
  pairingHintUrl?: string;
}) {
  const phase = useStore(store, (s) => s.phase);
  const pairing = useStore(store, (s) => s.pairing);
  const connectivity = useStore(store, (s) => s.connectivity);
  const activeRevision = useStore(store, (s) => s.activeRevision);
  const onGlass = useStore(store, (s) => s.onGlass);
  const displayOn = useStore(store, (s) => s.displayOn);
  const toast = useStore(store, (s) => s.toasts[0]);
  const onGlassEmpty = phase === 'playing' && onGlass !== null && onGlass.pages === 0;
  // An archived screen's manifest is darkened: dark glass, not the idle card.
  const darkened = onGlassEmpty && onGlass.darkened;
  return (
    <>
      {phase === 'playing' && <Stage store={store} controller={controller} />}
      {phase === 'playing' && activeRevision === null && (
        <div className="card" data-testid="starting-card">
          <div className="wordmark">Marquee</div>
          <div>
            <h1>Starting</h1>
            <p>Getting this screen's content ready.</p>
          </div>
        </div>
      )}
      {darkened && <div className="card dark" data-testid="archived-card" />}
      {onGlassEmpty && !darkened && (
        <div className="card" data-testid="idle-card">
          <div className="wordmark">Marquee</div>
          <div>
            <h1>{onGlass.screenLabel}</h1>
            <p>This screen is paired. Nothing is assigned to it yet.</p>
          </div>
        </div>
      )}
      {phase === 'booting' && (
        <div className="card" data-testid="booting-card">
          <div className="wordmark">Marquee</div>
        </div>
      )}
      {phase === 'pairing' && <PairingScreen pairing={pairing} hintUrl={pairingHintUrl} />}
      {phase === 'archived' && <div className="card dark" data-testid="archived-card" />}
      {phase === 'unknown-screen' && (
        <div className="card" data-testid="unknown-screen-card">
          <div>
            <h1>Screen not found</h1>
            <p>This screen address is no longer valid.</p>
          </div>
        </div>
      )}
      {toast && phase === 'playing' && (
        <div
          key={toast.id}
          className={`toast toast-${toast.level}`}
          role={toast.level === 'info' ? 'status' : 'alert'}
          data-testid="toast"
          data-level={toast.level}
        >
          {toast.text}
        </div>
      )}
      {/* Display off: black glass over everything (the kiosk also powers the panel down). */}
      {!displayOn && <div className="display-off" data-testid="display-off" />}
      {connectivity === 'offline' && (
        <div className="status-mark" role="status" data-testid="status-mark" data-connectivity="offline">
          Offline
        </div>
      )}
    </>
  );
}
