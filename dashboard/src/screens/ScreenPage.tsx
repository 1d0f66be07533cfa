// One screen: its live status, what it plays, and what a person may do to it (assign a playlist, its
// schedule, a takeover, tags, a toast, display power and schedule, settings, a screenshot, reload,
// reboot, archive, delete). Each action is the /api/v1 route an agent would call.
import { type FormEvent, useEffect, useState } from 'react';
import { Link } from 'wouter';
import { TOAST_LEVELS, TOAST_TEXT_MAX } from '../../../sdk/contract/fleet';
import type { Playlist } from '../../../sdk/contract/playlist';
import type { Screen } from '../../../sdk/contract/screens';
import type { ScreenPlaylistScheduleView } from '../../../sdk/contract/fleet';
import { useDashboard, useScreens } from '../app/dashboard-context';
import { useLoaded } from '../app/use-loaded';
import { ScheduleEditor } from '../fleet/ScheduleEditor';
import { DisplayPanel, LifecyclePanel, ScreenshotPanel, SettingsForm, TakeoverPanel } from '../fleet/ScreenControls';
import { Notice, PageHeading } from '../app/PageHeading';
import { PAGES, playlistPath } from '../app/routes';
import { useNow } from '../app/use-now';
import { playlistName, usePlaylists } from '../playlists/use-playlists';
import { problemMessage } from '../state/problem-message';
import { ScreenStatus } from './ScreenStatus';
import { lastSeenText, playingOf } from './screen-facts';
import { parseTags } from './tags';

type Result = { text: string; error: boolean } | null;

export function ScreenPage({ id }: { id: string }) {
  const { client, screens } = useDashboard();
  const live = useScreens((s) => s.byId[id]);
  const [fetched, setFetched] = useState<Screen | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  const now = useNow();
  const playlists = usePlaylists();
  const [result, setResult] = useState<Result>(null);

  const schedule = useLoaded(
    async () => (await client.screens.playlistSchedule(id)).data,
    [client, id],
    'The schedule',
  );
  useEffect(() => {
    if (live) return;
    client.screens.get(id).then(
      (r) => setFetched(r.data),
      (e: unknown) => setMissing(problemMessage(e, 'This screen could not be loaded')),
    );
  }, [client, id, live]);
  // The list's copy is live; a screen off the list (archived) is the one read or changed here.
  const screen = live ?? fetched;
  const reread = (_: ScreenPlaylistScheduleView) => schedule.reload();

  /** Runs one change, shows its outcome, and keeps the list's copy of the screen current. */
  const run = async (what: string, change: () => Promise<Screen | string>) => {
    try {
      const outcome = await change();
      if (typeof outcome === 'string') setResult({ text: outcome, error: false });
      else {
        // The list holds active and pairing screens only; an archived one stays on this page.
        if (outcome.state === 'archived') screens.getState().remove(outcome.id);
        else screens.getState().put(outcome);
        setFetched(outcome);
        setResult({ text: `${what}: done.`, error: false });
      }
    } catch (error) {
      setResult({ text: problemMessage(error, what), error: true });
    }
  };

  if (!screen)
    return (
      <section className="page">
        <PageHeading>Screen</PageHeading>
        <Notice text={missing} error />
        {!missing && <p aria-busy="true">Loading…</p>}
        <p>
          <Link href={PAGES.screens}>Back to the screens</Link>
        </p>
      </section>
    );

  const playing = playingOf(screen);
  const archived = screen.state === 'archived';
  return (
    <section className="page">
      <p className="crumbs">
        <Link href={PAGES.screens}>Screens</Link> /
      </p>
      <PageHeading>{screen.label}</PageHeading>
      <ScreenStatus screen={screen} now={now} />
      <Notice text={result?.text ?? null} error={result?.error} />
      <dl className="facts">
        <dt>Playing</dt>
        <dd data-testid="screen-playing">
          {archived ? (
            'Nothing: an archived screen’s glass is dark'
          ) : playing.playlistId ? (
            <>
              {!playing.reported && 'Assigned '}
              <Link href={playlistPath(playing.playlistId)}>{playlistName(playlists.value, playing.playlistId)}</Link>
            </>
          ) : playing.reported ? (
            'No playlist'
          ) : (
            'No playlist assigned'
          )}
        </dd>
        {playing.assignedApart !== undefined && (
          <>
            <dt>Assigned</dt>
            <dd data-testid="screen-assigned">
              {playing.assignedApart ? (
                <Link href={playlistPath(playing.assignedApart)}>
                  {playlistName(playlists.value, playing.assignedApart)}
                </Link>
              ) : (
                'No playlist'
              )}{' '}
              <span className="hint">(plays again when no takeover or schedule entry holds)</span>
            </dd>
          </>
        )}
        <dt>State</dt>
        <dd>{screen.state.replace('_', ' ')}</dd>
        <dt>Last seen</dt>
        <dd data-testid="screen-last-seen">{lastSeenText(screen, now)}</dd>
        <dt>Time zone</dt>
        <dd>{screen.timezone ?? 'the server’s (UTC)'}</dd>
        <dt>Screen id</dt>
        <dd>
          <code>{screen.id}</code>
        </dd>
      </dl>
      {archived && (
        <p className="hint" data-testid="archived-note">
          This screen is archived: its player is refused, and it takes no takeover, toast, display or schedule change.
          Unarchive it to control it again.
        </p>
      )}
      <div className="panels">
        {archived ? (
          <LifecyclePanel key={screen.state} screen={screen} run={run} />
        ) : (
          <ActiveControls
            screen={screen}
            schedule={schedule.value}
            playlists={playlists.value ?? []}
            noPlaylistYet={playlists.value?.length === 0}
            now={now}
            run={run}
            onChanged={reread}
          />
        )}
      </div>
      {!archived && (
        <ScheduleEditor screen={screen} view={schedule.value} playlists={playlists.value ?? []} onSaved={reread} />
      )}
    </section>
  );
}

type Run = (what: string, change: () => Promise<Screen | string>) => Promise<void>;

/** The controls of a screen whose player may be reached (an archived one has only its lifecycle). */
function ActiveControls({
  screen,
  schedule,
  playlists,
  noPlaylistYet,
  now,
  run,
  onChanged,
}: {
  screen: Screen;
  schedule: ScreenPlaylistScheduleView | undefined;
  playlists: Playlist[];
  noPlaylistYet: boolean;
  now: number;
  run: Run;
  onChanged: (view: ScreenPlaylistScheduleView) => void;
}) {
  return (
    <>
      <AssignForm screen={screen} playlists={playlists} run={run} />
      <TakeoverPanel
        screen={screen}
        view={schedule}
        playlists={playlists}
        noPlaylistYet={noPlaylistYet}
        onChanged={onChanged}
        run={run}
      />
      <TagsForm screen={screen} run={run} />
      <ToastForm screen={screen} run={run} />
      <DisplayPanel screen={screen} run={run} />
      <SettingsForm key={screen.revision} screen={screen} run={run} />
      <ScreenshotPanel screen={screen} now={now} run={run} />
      <LifecyclePanel key={screen.state} screen={screen} run={run} />
    </>
  );
}

function AssignForm({
  screen,
  playlists,
  run,
}: {
  screen: Screen;
  playlists: { id: string; name: string }[];
  run: Run;
}) {
  const { client } = useDashboard();
  const [choice, setChoice] = useState(screen.playlist_id ?? '');
  useEffect(() => setChoice(screen.playlist_id ?? ''), [screen.playlist_id]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run('Assign the playlist', async () => (await client.screens.assign(screen.id, choice || null)).data);
  };
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="assign-heading">
      <h2 id="assign-heading">Playlist</h2>
      <label>
        Playlist to play
        <select value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
          <option value="">None</option>
          {playlists.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Assign</button>
    </form>
  );
}

function TagsForm({ screen, run }: { screen: Screen; run: Run }) {
  const { client } = useDashboard();
  const [text, setText] = useState(screen.tags.join(' '));
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseTags(text);
    setProblem(parsed.problem);
    if (parsed.problem) return;
    void run('Save the tags', async () => (await client.screens.update(screen.id, { tags: parsed.tags })).data);
  };
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="tags-heading">
      <h2 id="tags-heading">Tags</h2>
      <label>
        Tags, separated by spaces
        <input
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          aria-invalid={problem ? true : undefined}
          aria-describedby="tags-problem"
        />
      </label>
      <p id="tags-problem" className="field-problem">
        {problem}
      </p>
      <button type="submit">Save tags</button>
    </form>
  );
}

function ToastForm({ screen, run }: { screen: Screen; run: Run }) {
  const { client } = useDashboard();
  const [text, setText] = useState('');
  const [level, setLevel] = useState<(typeof TOAST_LEVELS)[number]>('info');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run('Send the toast', async () => {
      await client.screens.toast(screen.id, { level, text });
      setText('');
      return 'The toast is on its way to the screen.';
    });
  };
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="toast-heading">
      <h2 id="toast-heading">Toast</h2>
      <label>
        Message on the screen
        <textarea
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          maxLength={TOAST_TEXT_MAX}
          rows={2}
          required
        />
      </label>
      <label>
        Level
        <select value={level} onChange={(e) => setLevel(e.currentTarget.value as typeof level)}>
          {TOAST_LEVELS.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Send toast</button>
    </form>
  );
}
