// A screen's playlist schedule: entries in priority order (the first whose rule holds plays), each a
// playlist with schedule/v1 windows and optional from/until dates, drawn on a week calendar above the
// form. Saving is PUT …/playlist-schedule (the agent's route); problems show on the field they name.
import { type FormEvent, useEffect, useState } from 'react';
import { ScreenPlaylistScheduleWrite, type ScreenPlaylistScheduleView } from '../../../sdk/contract/fleet';
import type { Screen } from '../../../sdk/contract/screens';
import { useDashboard } from '../app/dashboard-context';
import { Notice } from '../app/PageHeading';
import { fieldId, issuesByField, NO_PROBLEMS, problemsOf, type FieldProblems } from './field-problems';
import { entryDraft, entryWrite, type EntryDraft, moved, newWindow, windowOf } from './schedule-drafts';
import { calendarBlocks } from './week-calendar';
import { WeekCalendar } from './WeekCalendar';
import { FieldProblem, invalidProps, WindowsEditor } from './WindowsEditor';

const ID = 'schedule';

export function ScheduleEditor({
  screen,
  view,
  playlists,
  onSaved,
}: {
  screen: Screen;
  view: ScreenPlaylistScheduleView | undefined;
  playlists: { id: string; name: string }[];
  onSaved: (view: ScreenPlaylistScheduleView) => void;
}) {
  const { client } = useDashboard();
  const [entries, setEntries] = useState<EntryDraft[]>([]);
  const [problems, setProblems] = useState<FieldProblems>(NO_PROBLEMS);
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => setEntries((view?.entries ?? []).map(entryDraft)), [view]);

  const set = (i: number, change: Partial<EntryDraft>) =>
    setEntries(entries.map((e, j) => (j === i ? { ...e, ...change } : e)));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaved(null);
    const writes = entries.map(entryWrite);
    const parsed = ScreenPlaylistScheduleWrite.safeParse({ entries: writes });
    if (!parsed.success) {
      setProblems({ fields: issuesByField(parsed.error), message: 'Some fields need a change (shown below them).' });
      return;
    }
    try {
      const answer = (await client.screens.setPlaylistSchedule(screen.id, writes)).data;
      setProblems(NO_PROBLEMS);
      setSaved('Schedule saved.');
      onSaved(answer);
    } catch (error) {
      const found = problemsOf(error, (f) => document.getElementById(fieldId(ID, f)) !== null, 'Saving the schedule');
      setProblems(
        found.message || Object.keys(found.fields).length === 0
          ? found
          : { ...found, message: 'Some fields need a change (shown below them).' },
      );
    }
  };
  const names = entries.map((e) => playlists.find((p) => p.id === e.playlist_id)?.name ?? 'no playlist chosen');
  const fields = problems.fields;
  return (
    <form className="panel wide-panel" onSubmit={(e) => void submit(e)} aria-labelledby="schedule-heading">
      <h2 id="schedule-heading">Schedule</h2>
      <p className="hint">
        Entries in priority order: the first whose rule holds plays, in the screen’s time zone (
        {screen.timezone ?? 'not set: set one under Settings first'}). Outside every entry the assigned playlist plays.
      </p>
      {entries.length > 0 && (
        <>
          <WeekCalendar
            blocks={calendarBlocks(entries.map((e) => (e.windows.length > 0 ? e.windows.map(windowOf) : undefined)))}
            names={names}
          />
          <ol className="legend">
            {names.map((name, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the legend follows the entries' order
              <li key={i} className={`hue-${i % 8}`}>
                {name}
              </li>
            ))}
          </ol>
        </>
      )}
      <ol className="entries">
        {entries.map((entry, i) => {
          const at = `entries.${i}`;
          const id = (f: string) => fieldId(ID, `${at}.${f}`);
          return (
            <li key={entry.id ?? `new-${i}`} className="entry" data-testid="schedule-entry">
              <fieldset>
                <legend>
                  Entry {i + 1}: {names[i]}
                </legend>
                <div className="row">
                  <label>
                    Playlist
                    <select
                      value={entry.playlist_id}
                      onChange={(e) => set(i, { playlist_id: e.currentTarget.value })}
                      {...invalidProps(id('playlist_id'), fields[`${at}.playlist_id`])}
                    >
                      <option value="">Choose…</option>
                      {playlists.map((p) => (
                        <option key={p.id} value={p.id}>
                          {p.name}
                        </option>
                      ))}
                    </select>
                  </label>
                  <label className="inline">
                    <input
                      type="checkbox"
                      checked={entry.enabled}
                      onChange={(e) => set(i, { enabled: e.currentTarget.checked })}
                    />
                    Enabled
                  </label>
                </div>
                <FieldProblem id={id('playlist_id')} text={fields[`${at}.playlist_id`]} />
                <div className="row">
                  <label>
                    From (optional)
                    <input
                      type="datetime-local"
                      value={entry.from}
                      onChange={(e) => set(i, { from: e.currentTarget.value })}
                      {...invalidProps(id('rule.from'), fields[`${at}.rule.from`])}
                    />
                  </label>
                  <label>
                    Until (optional)
                    <input
                      type="datetime-local"
                      value={entry.until}
                      onChange={(e) => set(i, { until: e.currentTarget.value })}
                      {...invalidProps(id('rule.until'), fields[`${at}.rule.until`])}
                    />
                  </label>
                </div>
                <FieldProblem id={id('rule.from')} text={fields[`${at}.rule.from`]} />
                <FieldProblem id={id('rule.until')} text={fields[`${at}.rule.until`]} />
                <FieldProblem id={id('rule')} text={fields[`${at}.rule`]} />
                <WindowsEditor
                  windows={entry.windows}
                  onChange={(windows) => set(i, { windows })}
                  path={`${at}.rule.windows`}
                  idPrefix={ID}
                  problems={fields}
                  legend="When it plays"
                />
                <div className="row">
                  <button
                    type="button"
                    className="quiet"
                    onClick={() => setEntries(moved(entries, i, -1))}
                    disabled={i === 0}
                  >
                    Move entry {i + 1} up
                  </button>
                  <button
                    type="button"
                    className="quiet"
                    onClick={() => setEntries(moved(entries, i, 1))}
                    disabled={i === entries.length - 1}
                  >
                    Move entry {i + 1} down
                  </button>
                  <button
                    type="button"
                    className="quiet danger-text"
                    onClick={() => setEntries(entries.filter((_, j) => j !== i))}
                  >
                    Remove entry {i + 1}
                  </button>
                </div>
              </fieldset>
            </li>
          );
        })}
      </ol>
      <div className="row">
        <button
          type="button"
          className="secondary"
          onClick={() =>
            setEntries([
              ...entries,
              { playlist_id: playlists[0]?.id ?? '', enabled: true, from: '', until: '', windows: [newWindow()] },
            ])
          }
        >
          Add an entry
        </button>
        <button type="submit">Save schedule</button>
      </div>
      <Notice text={problems.message ?? saved} error={problems.message !== null} />
    </form>
  );
}
