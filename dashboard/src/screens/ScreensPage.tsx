// Screens: pair a new one by the code its player shows, every screen with its live status, health,
// what it plays and its last screenshot, and one action over the selected (or tagged) screens.
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link } from 'wouter';
import type { Playlist } from '../../../sdk/contract/playlist';
import type { Screen } from '../../../sdk/contract/screens';
import { useDashboard, useScreens } from '../app/dashboard-context';
import { FleetActionPanel } from '../fleet/FleetActionPanel';
import { screenshotUrl } from '../fleet/ScreenControls';
import { Notice, PageHeading } from '../app/PageHeading';
import { screenPath } from '../app/routes';
import { useNow } from '../app/use-now';
import { GRID_GAP_REM, GRID_MIN_COLUMN_REM, type Cell, VirtualGrid } from '../app/VirtualGrid';
import { playlistName, usePlaylists } from '../playlists/use-playlists';
import { problemMessage } from '../state/problem-message';
import { sortedScreens } from '../state/screens-store';
import { healthLine } from './health-line';
import { liveLine } from './live-line';
import { codeFromLink, isPairingCode, normalizePairingCode, withoutPairingParam } from './pairing-code';
import { playingOf } from './screen-facts';
import { ScreenStatus } from './ScreenStatus';

/** A card with a screenshot, status, what plays and a line of tags, before it is measured. */
const SCREEN_ROW_ESTIMATE_PX = 264;

export function ScreensPage() {
  const byId = useScreens((s) => s.byId);
  const loaded = useScreens((s) => s.loaded);
  const error = useScreens((s) => s.error);
  const { screens: store } = useDashboard();
  const playlists = usePlaylists();
  const now = useNow();
  const screens = sortedScreens(byId);
  const [selected, setSelected] = useState<string[]>([]);
  /** The fleet action form is open (it opens by itself when a screen is ticked). */
  const [acting, setActing] = useState(false);
  const chosen = selected.filter((id) => byId[id]);
  const toggle = (id: string, on: boolean) =>
    setSelected(on ? [...chosen.filter((s) => s !== id), id] : chosen.filter((s) => s !== id));
  const labels = Object.fromEntries(screens.map((s) => [s.id, s.label]));
  const tags = [...new Set(screens.flatMap((s) => s.tags))].sort();
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
      {screens.length > 0 && !acting && chosen.length === 0 && (
        <p>
          <button type="button" className="secondary" onClick={() => setActing(true)}>
            Act on many screens…
          </button>{' '}
          <span className="hint">or tick screens below.</span>
        </p>
      )}
      {screens.length > 0 && (acting || chosen.length > 0) && (
        <FleetActionPanel
          selected={chosen}
          labels={labels}
          tags={tags}
          playlists={playlists.value ?? []}
          onDone={() => void store.getState().load()}
        />
      )}
      <VirtualGrid
        items={screens}
        itemKey={(screen) => screen.id}
        label="Screens"
        className="screen-grid"
        minColumnRem={GRID_MIN_COLUMN_REM}
        gapRem={GRID_GAP_REM}
        estimateRowPx={SCREEN_ROW_ESTIMATE_PX}
        renderItem={(screen, cell) => (
          <ScreenCard
            cell={cell}
            screen={screen}
            now={now}
            playlists={playlists.value}
            selected={chosen.includes(screen.id)}
            onSelect={(on) => toggle(screen.id, on)}
          />
        )}
      />
    </section>
  );
}

function ScreenCard({
  cell,
  screen,
  now,
  playlists,
  selected,
  onSelect,
}: {
  cell: Cell;
  screen: Screen;
  now: number;
  playlists: Playlist[] | undefined;
  selected: boolean;
  onSelect: (on: boolean) => void;
}) {
  const health = screen.health;
  const shot = health?.screenshot;
  const playing = playingOf(screen);
  const live = useScreens((s) => s.live[screen.id]);
  const line = [liveLine(live, screen.online, now), health ? healthLine(health, now) : ''].filter(Boolean).join(' · ');
  return (
    <li {...cell} className={`screen-card${selected ? ' selected' : ''}`} data-testid="screen-card">
      {shot?.state === 'ready' && shot.capture_id ? (
        <img
          className="card-shot"
          src={screenshotUrl(screen.id, shot.capture_id)}
          alt={`Last screenshot of ${screen.label}`}
          loading="lazy"
          width={shot.width}
          height={shot.height}
        />
      ) : (
        <div className="card-shot empty" aria-hidden="true">
          <span>No screenshot yet</span>
        </div>
      )}
      <div className="card-title">
        <h2>
          <Link href={screenPath(screen.id)}>{screen.label}</Link>
        </h2>
        <label className="select-screen">
          <input type="checkbox" checked={selected} onChange={(e) => onSelect(e.currentTarget.checked)} />
          <span className="visually-hidden">Select {screen.label}</span>
        </label>
      </div>
      <ScreenStatus screen={screen} now={now} />
      <p className="playing">
        {playing.playlistId ? (
          <>
            {playing.reported ? 'Now playing' : 'Assigned'}{' '}
            <strong>{playlistName(playlists, playing.playlistId)}</strong>
          </>
        ) : (
          'No playlist assigned'
        )}
      </p>
      {line && (
        <p className="health" data-testid="screen-health">
          {line}
        </p>
      )}
      {screen.tags.length > 0 && (
        <ul className="tags" aria-label="Tags">
          {screen.tags.map((tag) => (
            <li key={tag}>{tag}</li>
          ))}
        </ul>
      )}
    </li>
  );
}

function PairForm() {
  const { client, screens } = useDashboard();
  // A phone that scanned the player's QR code arrives with the code in the address (?pair=).
  const [linked] = useState(() => codeFromLink(window.location.search));
  const [code, setCode] = useState(linked);
  const [label, setLabel] = useState('');
  const nameField = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (!linked) return;
    const { pathname, search, hash } = window.location;
    window.history.replaceState(window.history.state, '', `${pathname}${withoutPairingParam(search)}${hash}`);
    nameField.current?.focus();
  }, [linked]);
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
          <input
            ref={nameField}
            value={label}
            onChange={(e) => setLabel(e.currentTarget.value)}
            placeholder="Lobby"
            maxLength={120}
          />
        </label>
        <button type="submit" disabled={busy}>
          Pair screen
        </button>
      </div>
      <Notice text={result?.text ?? null} error={result?.error} />
    </form>
  );
}
