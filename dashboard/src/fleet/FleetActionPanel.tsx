// One action over many screens from the grid: the selected screens or every active screen with a
// tag, through POST /api/v1/screens/actions (its /dashboard/v1 twin), and each screen's outcome.
import { type FormEvent, useState } from 'react';
import { TOAST_LEVELS, TOAST_TEXT_MAX, type ScreenActionResult } from '../../../sdk/contract/fleet';
import { useDashboard } from '../app/dashboard-context';
import { Notice } from '../app/PageHeading';
import { problemMessage } from '../state/problem-message';
import { localInputIn } from './ScreenControls';
import { FLEET_CHOICES, type FleetForm, fleetRequest } from './fleet-action-form';

export function FleetActionPanel({
  selected,
  labels,
  tags,
  playlists,
  onDone,
}: {
  selected: string[];
  /** Screen id → label, for the result list. */
  labels: Record<string, string>;
  tags: string[];
  playlists: { id: string; name: string }[];
  onDone: () => void;
}) {
  const { client } = useDashboard();
  const [form, setForm] = useState<Omit<FleetForm, 'ids'>>(() => ({
    target: 'selected',
    tag: '',
    choice: 'takeover',
    playlistId: '',
    until: localInputIn(Date.now(), 3_600_000),
    reason: '',
    level: 'info',
    text: '',
  }));
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [result, setResult] = useState<ScreenActionResult | null>(null);
  const set = (change: Partial<FleetForm>) => setForm({ ...form, ...change });
  const target = selected.length === 0 && form.target === 'selected' ? 'tag' : form.target;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const request = fleetRequest({
      ...form,
      target,
      ids: selected,
      playlistId: form.playlistId || (form.choice === 'takeover' ? (playlists[0]?.id ?? '') : ''),
    });
    if ('problem' in request) {
      setProblem(request.problem);
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      setResult((await client.screens.actions(request.selector, request.action)).data);
      onDone();
    } catch (error) {
      setResult(null);
      setProblem(problemMessage(error, 'The fleet action'));
    } finally {
      setBusy(false);
    }
  };
  const needsPlaylist = form.choice === 'takeover' || form.choice === 'assign';
  return (
    <form className="panel fleet-panel" onSubmit={(e) => void submit(e)} aria-labelledby="fleet-heading">
      <h2 id="fleet-heading">Fleet action</h2>
      <fieldset className="row target">
        <legend>Screens</legend>
        {selected.length > 0 && (
          <label className="inline">
            <input
              type="radio"
              name="fleet-target"
              checked={target === 'selected'}
              onChange={() => set({ target: 'selected' })}
            />
            The {selected.length} selected
          </label>
        )}
        <label className="inline">
          <input type="radio" name="fleet-target" checked={target === 'tag'} onChange={() => set({ target: 'tag' })} />
          Every active screen tagged
        </label>
        <label>
          <span className="visually-hidden">Tag</span>
          <input
            value={form.tag}
            onChange={(e) => set({ tag: e.currentTarget.value, target: 'tag' })}
            list="fleet-tags"
            placeholder="lobby"
            aria-label="Tag"
          />
        </label>
        <datalist id="fleet-tags">
          {tags.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
      </fieldset>
      <div className="row">
        <label>
          Action
          <select value={form.choice} onChange={(e) => set({ choice: e.currentTarget.value as FleetForm['choice'] })}>
            {FLEET_CHOICES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {needsPlaylist && (
          <label>
            Playlist
            <select value={form.playlistId} onChange={(e) => set({ playlistId: e.currentTarget.value })}>
              {form.choice === 'assign' && <option value="">None</option>}
              {playlists.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        )}
        {form.choice === 'takeover' && (
          <>
            <label>
              Ends at
              <input type="datetime-local" value={form.until} onChange={(e) => set({ until: e.currentTarget.value })} />
            </label>
            <label>
              Reason
              <input
                value={form.reason}
                onChange={(e) => set({ reason: e.currentTarget.value })}
                placeholder="Fire drill"
              />
            </label>
          </>
        )}
        {form.choice === 'toast' && (
          <>
            <label>
              Message
              <input
                value={form.text}
                maxLength={TOAST_TEXT_MAX}
                onChange={(e) => set({ text: e.currentTarget.value })}
              />
            </label>
            <label>
              Level
              <select value={form.level} onChange={(e) => set({ level: e.currentTarget.value as FleetForm['level'] })}>
                {TOAST_LEVELS.map((l) => (
                  <option key={l} value={l}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
          </>
        )}
        <button type="submit" disabled={busy}>
          Run on the screens
        </button>
      </div>
      <Notice text={problem} error />
      {result && (
        <section aria-labelledby="fleet-results-heading" className="fleet-results">
          <h3 id="fleet-results-heading">
            {result.succeeded} done, {result.failed} failed
          </h3>
          <ul aria-label="Result per screen">
            {result.results.map((r) => (
              <li key={r.screen_id} className={r.ok ? 'ok' : 'failed'} data-testid="fleet-result">
                <strong>{labels[r.screen_id] ?? r.screen_id}</strong>:{' '}
                {r.ok ? 'done' : String(r.problem.detail ?? r.problem.title ?? `failed (${r.status})`)}
              </li>
            ))}
            {result.results.length === 0 && <li>No screen matched.</li>}
          </ul>
        </section>
      )}
    </form>
  );
}
