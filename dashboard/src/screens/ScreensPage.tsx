// Screens: pair a new one by the code its player shows, and every screen with its live status and
// what it plays.
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { useDashboard, useScreens } from '../app/dashboard-context';
import { Notice, PageHeading } from '../app/PageHeading';
import { screenPath } from '../app/routes';
import { useNow } from '../app/use-now';
import { playlistName, usePlaylists } from '../playlists/use-playlists';
import { problemMessage } from '../state/problem-message';
import { sortedScreens } from '../state/screens-store';
import { isPairingCode, normalizePairingCode } from './pairing-code';
import { ScreenStatus } from './ScreenStatus';

export function ScreensPage() {
  const byId = useScreens((s) => s.byId);
  const loaded = useScreens((s) => s.loaded);
  const error = useScreens((s) => s.error);
  const playlists = usePlaylists();
  const now = useNow();
  const screens = sortedScreens(byId);
  return (
    <section className="page">
      <PageHeading>Screens</PageHeading>
      <PairForm />
      <Notice text={error} error />
      {loaded && screens.length === 0 && !error && (
        <p className="empty-state">
          No screens yet. Open the player on a screen's browser (the address is in the README), then type the code it
          shows above.
        </p>
      )}
      <ul className="screen-grid" aria-label="Screens">
        {screens.map((screen) => (
          <li key={screen.id} className="screen-card" data-testid="screen-card">
            <h2>
              <Link href={screenPath(screen.id)}>{screen.label}</Link>
            </h2>
            <ScreenStatus screen={screen} now={now} />
            <p className="playing">
              {screen.playlist_id ? (
                <>
                  Playing <strong>{playlistName(playlists.value, screen.playlist_id)}</strong>
                </>
              ) : (
                'No playlist assigned'
              )}
            </p>
            {screen.tags.length > 0 && (
              <ul className="tags" aria-label="Tags">
                {screen.tags.map((tag) => (
                  <li key={tag}>{tag}</li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function PairForm() {
  const { client, screens } = useDashboard();
  const [code, setCode] = useState('');
  const [label, setLabel] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ text: string; error: boolean } | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const normalized = normalizePairingCode(code);
    if (!isPairingCode(normalized)) {
      setResult({ text: 'A pairing code is six letters and digits, as the screen shows it.', error: true });
      return;
    }
    setBusy(true);
    try {
      const claim = (await client.screens.pair({ code: normalized, ...(label.trim() ? { label: label.trim() } : {}) }))
        .data;
      screens.getState().put(claim.screen);
      setResult({ text: `Paired “${claim.screen.label}”. The screen connects in a moment.`, error: false });
      setCode('');
      setLabel('');
    } catch (error) {
      setResult({ text: problemMessage(error, 'Pairing failed'), error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="pair-form" onSubmit={(e) => void submit(e)} aria-labelledby="pair-heading">
      <h2 id="pair-heading">Pair a screen</h2>
      <div className="row">
        <label>
          Pairing code
          <input
            value={code}
            onChange={(e) => setCode(e.currentTarget.value)}
            autoComplete="off"
            autoCapitalize="characters"
            spellCheck={false}
            placeholder="ABC-234"
            required
          />
        </label>
        <label>
          <span>
            Name <span className="optional">(optional)</span>
          </span>
          <input value={label} onChange={(e) => setLabel(e.currentTarget.value)} placeholder="Lobby" maxLength={120} />
        </label>
        <button type="submit" disabled={busy}>
          Pair screen
        </button>
      </div>
      <Notice text={result?.text ?? null} error={result?.error} />
    </form>
  );
}
