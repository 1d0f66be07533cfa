// A screen's fleet controls on its page: takeover with an end time, display power and its weekly
// schedule, settings (time zone, sync group, wall region), a screenshot, reboot, and the lifecycle
// (recovery confirmation, unarchive, delete). Each is the /api/v1 route an agent calls, through its
// /dashboard/v1 twin; the page shows each outcome in its status line.
import { Confirm } from '../app/Confirm';
import { type FormEvent, useEffect, useState } from 'react';
import { useLocation } from 'wouter';
import {
  DisplaySchedule,
  TAKEOVER_REASON_MAX,
  type DisplayState,
  type ScreenPlaylistScheduleView,
} from '../../../sdk/contract/fleet';
import type { Screen } from '../../../sdk/contract/screens';
import { useDashboard } from '../app/dashboard-context';
import { PAGES } from '../app/routes';
import { timeAgo } from '../app/format';
import { fieldId, issuesByField, NO_PROBLEMS, problemsOf, type FieldProblems } from './field-problems';
import { displayScheduleOf, windowDraft, type WindowDraft } from './schedule-drafts';
import { FieldProblem, invalidProps, WindowsEditor } from './WindowsEditor';

export type Run = (what: string, change: () => Promise<Screen | string>) => Promise<void>;
type Playlists = { id: string; name: string }[];

/** The viewer's time zone: a datetime-local field is typed, and shown, in it. */
export function viewerZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/**
 * When a takeover ends, said in the viewer's zone (the one its field is typed in), and in the
 * screen's own zone too when that is another: "29 Nov 2026, 06:29 your time (Europe/Paris)".
 */
export function takeoverEndText(until: string, viewer: string, screenZone: string | undefined): string {
  const at = (zone: string) =>
    new Date(until).toLocaleString('en-GB', { timeZone: zone, dateStyle: 'medium', timeStyle: 'short' });
  const mine = `${at(viewer)} your time (${viewer})`;
  return screenZone && screenZone !== viewer ? `${mine}, ${at(screenZone)} on the screen (${screenZone})` : mine;
}

/** A datetime-local value (the viewer's local time) an hour from `now`. */
export function localInputIn(now: number, ms: number): string {
  const d = new Date(now + ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function TakeoverPanel({
  screen,
  view,
  playlists,
  noPlaylistYet,
  onChanged,
  run,
}: {
  screen: Screen;
  view: ScreenPlaylistScheduleView | undefined;
  playlists: Playlists;
  /** The project's playlists were read and there are none (not: still being read). */
  noPlaylistYet: boolean;
  onChanged: (view: ScreenPlaylistScheduleView) => void;
  run: Run;
}) {
  const { client } = useDashboard();
  const [playlist, setPlaylist] = useState('');
  const [until, setUntil] = useState(() => localInputIn(Date.now(), 3_600_000));
  const [reason, setReason] = useState('');
  const [problems, setProblems] = useState<FieldProblems>(NO_PROBLEMS);
  const takeover = view?.takeover ?? null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const end = new Date(until);
    if (Number.isNaN(end.getTime())) {
      setProblems({ fields: { until: 'Choose when the takeover ends.' }, message: null });
      return;
    }
    void run('Start the takeover', async () => {
      try {
        const answer = await client.screens.takeover(screen.id, {
          playlist_id: playlist || (playlists[0]?.id ?? ''),
          until: end.toISOString(),
          reason: reason.trim() || 'Takeover from the dashboard',
        });
        setProblems(NO_PROBLEMS);
        onChanged(answer.data);
        return 'The takeover is on.';
      } catch (error) {
        setProblems(problemsOf(error, (f) => ['playlist_id', 'until', 'reason'].includes(f), 'Start the takeover'));
        throw error;
      }
    });
  };
  const name = (id: string) => playlists.find((p) => p.id === id)?.name ?? id;
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="takeover-heading">
      <h2 id="takeover-heading">Takeover</h2>
      {takeover ? (
        <p data-testid="takeover-now">
          Taken over by <strong>{name(takeover.playlist_id)}</strong> until{' '}
          {takeoverEndText(takeover.until, viewerZone(), screen.timezone)} ({takeover.reason}).
        </p>
      ) : (
        <p className="hint">Plays one playlist now, over the schedule, until the time you choose.</p>
      )}
      {noPlaylistYet && (
        <p className="hint" data-testid="takeover-no-playlist">
          No playlist to take over with yet: the project's agent or the CLI makes playlists (
          <code>npx marquee playlist create</code>).
        </p>
      )}
      <label>
        Takeover playlist
        <select
          value={playlist}
          onChange={(e) => setPlaylist(e.currentTarget.value)}
          {...invalidProps(fieldId('takeover', 'playlist_id'), problems.fields.playlist_id)}
        >
          {playlists.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <FieldProblem id={fieldId('takeover', 'playlist_id')} text={problems.fields.playlist_id} />
      <label>
        Ends at <span className="hint">(your time, {viewerZone()})</span>
        <input
          type="datetime-local"
          value={until}
          onChange={(e) => setUntil(e.currentTarget.value)}
          required
          {...invalidProps(fieldId('takeover', 'until'), problems.fields.until)}
        />
      </label>
      <FieldProblem id={fieldId('takeover', 'until')} text={problems.fields.until} />
      <label>
        Reason
        <input
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value)}
          maxLength={TAKEOVER_REASON_MAX}
          placeholder="Fire drill"
          {...invalidProps(fieldId('takeover', 'reason'), problems.fields.reason)}
        />
      </label>
      <FieldProblem id={fieldId('takeover', 'reason')} text={problems.fields.reason} />
      <div className="row">
        <button type="submit" disabled={playlists.length === 0}>
          Start takeover
        </button>
        {takeover && (
          <button
            type="button"
            className="secondary"
            onClick={() =>
              void run('End the takeover', async () => {
                onChanged((await client.screens.clearTakeover(screen.id)).data);
                return 'The takeover ended; the schedule plays again.';
              })
            }
          >
            End takeover now
          </button>
        )}
      </div>
    </form>
  );
}

export function DisplayPanel({ screen, run }: { screen: Screen; run: Run }) {
  const { client } = useDashboard();
  const [display, setDisplay] = useState<DisplayState>();
  const [windows, setWindows] = useState<WindowDraft[]>([]);
  const [problems, setProblems] = useState<FieldProblems>(NO_PROBLEMS);
  useEffect(() => {
    client.screens.getDisplay(screen.id).then(
      (r) => setDisplay(r.data),
      () => setDisplay(undefined),
    );
  }, [client, screen.id]);
  useEffect(() => setWindows((display?.schedule?.on ?? []).map(windowDraft)), [display?.schedule]);
  const power = (what: string, value: 'on' | 'off' | null) =>
    void run(what, async () => {
      setDisplay((await client.screens.display(screen.id, value)).data);
      return value === null ? 'The display follows its schedule.' : `The display is turned ${value}.`;
    });
  const saveSchedule = (e: FormEvent) => {
    e.preventDefault();
    if (windows.length === 0) {
      void run('Clear the display schedule', async () => {
        setDisplay((await client.screens.displaySchedule(screen.id, null)).data);
        return 'The display schedule is cleared: the display stays on.';
      });
      return;
    }
    const schedule = displayScheduleOf(windows);
    const parsed = DisplaySchedule.safeParse(schedule);
    if (!parsed.success) {
      setProblems({ fields: issuesByField(parsed.error), message: null });
      return;
    }
    void run('Save the display schedule', async () => {
      try {
        setDisplay((await client.screens.displaySchedule(screen.id, schedule)).data);
        setProblems(NO_PROBLEMS);
        return 'Display schedule saved.';
      } catch (error) {
        setProblems(problemsOf(error, (f) => document.getElementById(fieldId('display', f)) !== null, 'Display'));
        throw error;
      }
    });
  };
  const state = !display
    ? 'Loading…'
    : display.power
      ? `Turned ${display.power} (override)`
      : display.schedule
        ? 'Following its schedule'
        : 'On (no schedule)';
  return (
    <form className="panel" onSubmit={saveSchedule} aria-labelledby="display-heading">
      <h2 id="display-heading">Display</h2>
      <p data-testid="display-state">{state}</p>
      <div className="row">
        <button type="button" className="secondary" onClick={() => power('Turn the display on', 'on')}>
          Turn on
        </button>
        <button type="button" className="secondary" onClick={() => power('Turn the display off', 'off')}>
          Turn off
        </button>
        {display?.power && (
          <button type="button" className="quiet" onClick={() => power('Follow the schedule', null)}>
            Follow the schedule
          </button>
        )}
      </div>
      <WindowsEditor
        windows={windows}
        onChange={setWindows}
        path="on"
        idPrefix="display"
        problems={problems.fields}
        legend="On during (off outside these windows)"
      />
      {(windows.length > 0 || display?.schedule) && (
        <button type="submit">{windows.length === 0 ? 'Clear display schedule' : 'Save display schedule'}</button>
      )}
    </form>
  );
}

export function SettingsForm({ screen, run }: { screen: Screen; run: Run }) {
  const { client } = useDashboard();
  const [timezone, setTimezone] = useState(screen.timezone ?? '');
  const [group, setGroup] = useState(screen.sync_group ?? '');
  const [region, setRegion] = useState(() => regionText(screen));
  const [problems, setProblems] = useState<FieldProblems>(NO_PROBLEMS);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const numbers = region.trim()
      ? region
          .trim()
          .split(/[\s,]+/)
          .map(Number)
      : [];
    if (numbers.length !== 0 && (numbers.length !== 4 || numbers.some((n) => !Number.isFinite(n)))) {
      setProblems({ fields: { wall_region: 'Four numbers: x, y, width, height (or empty).' }, message: null });
      return;
    }
    const [x, y, width, height] = numbers as [number, number, number, number];
    void run('Save the settings', async () => {
      try {
        const saved = (
          await client.screens.update(screen.id, {
            ...(timezone.trim() ? { timezone: timezone.trim() } : {}),
            sync_group: group.trim() || null,
            wall_region: numbers.length === 4 && group.trim() ? { x, y, width, height } : null,
          })
        ).data;
        setProblems(NO_PROBLEMS);
        return saved;
      } catch (error) {
        setProblems(
          problemsOf(error, (f) => ['timezone', 'sync_group'].includes(f) || f.startsWith('wall_region'), 'Settings'),
        );
        throw error;
      }
    });
  };
  const regionProblem =
    problems.fields.wall_region ?? Object.entries(problems.fields).find(([f]) => f.startsWith('wall_region.'))?.[1];
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <label>
        Time zone
        <input
          value={timezone}
          onChange={(e) => setTimezone(e.currentTarget.value)}
          list="time-zones"
          placeholder="Europe/Paris"
          {...invalidProps(fieldId('settings', 'timezone'), problems.fields.timezone)}
        />
      </label>
      <datalist id="time-zones">
        {timeZones().map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
      <FieldProblem id={fieldId('settings', 'timezone')} text={problems.fields.timezone} />
      <label>
        Sync group <span className="optional">(screens of one group play in lockstep)</span>
        <input
          value={group}
          onChange={(e) => setGroup(e.currentTarget.value)}
          placeholder="wall1"
          {...invalidProps(fieldId('settings', 'sync_group'), problems.fields.sync_group)}
        />
      </label>
      <FieldProblem id={fieldId('settings', 'sync_group')} text={problems.fields.sync_group} />
      <label>
        Wall region <span className="optional">(x, y, width, height of the canvas; needs a sync group)</span>
        <input
          value={region}
          onChange={(e) => setRegion(e.currentTarget.value)}
          placeholder="0, 0, 960, 1080"
          inputMode="decimal"
          {...invalidProps(fieldId('settings', 'wall_region'), regionProblem)}
        />
      </label>
      <FieldProblem id={fieldId('settings', 'wall_region')} text={regionProblem} />
      <button type="submit">Save settings</button>
    </form>
  );
}

function regionText(screen: Screen): string {
  const r = screen.wall_region;
  return r ? `${r.x}, ${r.y}, ${r.width}, ${r.height}` : '';
}

let zones: string[] | undefined;
function timeZones(): string[] {
  zones ??= typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return zones;
}

export function ScreenshotPanel({ screen, now, run }: { screen: Screen; now: number; run: Run }) {
  const { client } = useDashboard();
  const shot = screen.health?.screenshot;
  const [waiting, setWaiting] = useState(false);
  const take = () =>
    void run('Take a screenshot', async () => {
      setWaiting(true);
      try {
        const accepted = (await client.screens.requestScreenshot(screen.id)).data;
        const done = await client.screens.awaitScreenshot(screen.id, accepted.capture_id);
        return done.outcome === 'ready'
          ? (await client.screens.get(screen.id)).data
          : `No screenshot: ${done.status.reason ?? done.outcome.replace('_', ' ')}.`;
      } finally {
        setWaiting(false);
      }
    });
  return (
    <section className="panel" aria-labelledby="shot-heading">
      <h2 id="shot-heading">Screenshot</h2>
      {shot?.state === 'ready' && shot.capture_id ? (
        <figure className="shot">
          <img
            src={screenshotUrl(screen.id, shot.capture_id)}
            alt={`What ${screen.label} showed ${shot.captured_at ? timeAgo(shot.captured_at, now) : ''}`}
            width={shot.width}
            height={shot.height}
          />
          <figcaption>{shot.captured_at ? `Taken ${timeAgo(shot.captured_at, now)}` : 'Latest'}</figcaption>
        </figure>
      ) : (
        <p className="hint">No screenshot yet.</p>
      )}
      {!screen.online && (
        <p className="hint" data-testid="screenshot-offline">
          The screen is offline: take one when it is back online.
        </p>
      )}
      <button type="button" className="secondary" onClick={take} disabled={waiting || !screen.online}>
        {waiting ? 'Waiting for the screen…' : 'Take a screenshot'}
      </button>
    </section>
  );
}

/** The ready still of a capture, on the dashboard origin (the cookie authorizes it). */
export function screenshotUrl(screenId: string, captureId: string): string {
  return `/dashboard/v1/screens/${encodeURIComponent(screenId)}/screenshot?capture_id=${encodeURIComponent(captureId)}`;
}

export function LifecyclePanel({ screen, run }: { screen: Screen; run: Run }) {
  const { client, screens } = useDashboard();
  const [, navigate] = useLocation();
  const [confirming, setConfirming] = useState<'archive' | 'delete' | null>(null);
  const archived = screen.state === 'archived';
  return (
    <section className="panel" aria-labelledby="actions-heading">
      <h2 id="actions-heading">Actions</h2>
      {screen.recovery_pending && (
        <fieldset className="confirm" data-testid="recovery">
          <legend>
            A {screen.recovery_pending.host.platform} device
            {screen.recovery_pending.host.model ? ` (${screen.recovery_pending.host.model})` : ''} offers to take this
            screen over (its key was lost). Confirm only if it is yours.
          </legend>
          <button
            type="button"
            onClick={() =>
              void run('Confirm the recovery', async () => (await client.screens.confirmRecovery(screen.id)).data)
            }
          >
            Confirm recovery
          </button>
        </fieldset>
      )}
      {!archived && (
        <div className="row">
          <button
            type="button"
            className="secondary"
            onClick={() =>
              void run('Reload', async () => {
                await client.screens.reload(screen.id);
                return 'The player reloads within a few seconds.';
              })
            }
          >
            Reload the player
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              void run('Reboot', async () => {
                await client.screens.reboot(screen.id);
                return 'The device reboots if it can (a kiosk); a browser player reloads.';
              })
            }
          >
            Reboot
          </button>
        </div>
      )}
      {archived && (
        <button
          type="button"
          onClick={() => void run('Unarchive', async () => (await client.screens.unarchive(screen.id)).data)}
        >
          Unarchive
        </button>
      )}
      {confirming === null ? (
        <div className="row">
          {!archived && (
            <button type="button" className="danger" data-asks="archive" onClick={() => setConfirming('archive')}>
              Archive…
            </button>
          )}
          <button type="button" className="danger" data-asks="delete" onClick={() => setConfirming('delete')}>
            Delete…
          </button>
        </div>
      ) : (
        <Confirm
          asker={confirming}
          onCancel={() => setConfirming(null)}
          question={
            confirming === 'archive'
              ? `Archive “${screen.label}”? Its glass goes dark and it leaves the list; it stays paired.`
              : `Delete “${screen.label}” for good? Its player is unpaired; this cannot be undone.`
          }
        >
          <button
            type="button"
            className="danger"
            onClick={() =>
              confirming === 'archive'
                ? void run('Archive', async () => (await client.screens.archive(screen.id)).data)
                : void run('Delete', async () => {
                    await client.screens.delete(screen.id);
                    screens.getState().remove(screen.id);
                    navigate(PAGES.screens);
                    return `Deleted “${screen.label}”.`;
                  })
            }
          >
            {confirming === 'archive' ? 'Archive screen' : 'Delete screen'}
          </button>
        </Confirm>
      )}
    </section>
  );
}
