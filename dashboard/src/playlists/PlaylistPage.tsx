// One playlist: its pages in order, each drawn to scale with its transition, time on glass and
// visibility rule, and its soundtrack, all changeable here (drag a page by its grip, or its Move
// buttons from the keyboard) with problems under the field they name; a live preview plays the
// changed playlist in the player's own engine. The dashboard does not save playlists (spec: it
// does not author them): a changed playlist is downloaded as its document and applied with
// `marquee playlist update`, or handed to the project's agent (docs/decisions.md D-300).
import { type DragEvent, lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import { Link } from 'wouter';
import { MEDIA_LIST_MAX_LIMIT, type Media } from '../../../sdk/contract/media';
import type { PageWrite, Playlist } from '../../../sdk/contract/playlist';
import { useDashboard, useEvents } from '../app/dashboard-context';
import { Notice, PageHeading } from '../app/PageHeading';
import { PAGES } from '../app/routes';
import { useLoaded } from '../app/use-loaded';
import { fieldId } from '../fleet/field-problems';
import { CanvasPreview } from './CanvasPreview';
import { FORM, PageFields } from './PageFields';
import {
  draftOf,
  draftProblems,
  movedTo,
  type PlaylistDraft,
  resolvedItems,
  sameDraft,
  withPage,
} from './playlist-draft';
import { type PlaylistNews, playlistNews } from './playlist-events';
import { placementSummary } from './playlist-summary';
import { SoundtrackEditor } from './SoundtrackEditor';
import './playlists.css';

// The player's engine is a chunk of its own, loaded when a preview is first played.
const LivePreview = lazy(() => import('./LivePreview'));

/** The media the page names (thumbnails, soundtrack), read page by page up to this many. */
const MEDIA_CAP = 2000;

export function PlaylistPage({ id }: { id: string }) {
  const { client } = useDashboard();
  const playlist = useLoaded<Playlist>(async () => (await client.playlists.get(id)).data, [client, id], 'The playlist');
  const media = useLoaded<Media[]>(
    async () => {
      const items: Media[] = [];
      let cursor: string | undefined;
      do {
        const page = (await client.media.list({ limit: MEDIA_LIST_MAX_LIMIT, ...(cursor ? { cursor } : {}) })).data;
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor && items.length < MEDIA_CAP);
      return items;
    },
    [client],
    'The media',
  );
  const p = playlist.value;
  const events = useEvents((s) => s.items);
  const news = useMemo(() => (p ? playlistNews(events, p.id, p.revision) : null), [events, p]);
  return (
    <section className="page playlist-page">
      <p className="crumbs">
        <Link href={PAGES.playlists}>Playlists</Link> /
      </p>
      <PageHeading>{p?.name ?? 'Playlist'}</PageHeading>
      <Notice text={playlist.error ?? media.error} error />
      {p && (
        <PlaylistEditor
          key={`${p.id}@${p.revision}`}
          playlist={p}
          media={media.value ?? []}
          news={news}
          onReload={playlist.reload}
        />
      )}
    </section>
  );
}

function PlaylistEditor({
  playlist,
  media,
  news,
  onReload,
}: {
  playlist: Playlist;
  media: Media[];
  /** A newer revision (or a delete) the live log told of. */
  news: PlaylistNews;
  onReload: () => void;
}) {
  const { client } = useDashboard();
  const original = useMemo(() => draftOf(playlist), [playlist]);
  const items = useMemo(() => resolvedItems(playlist), [playlist]);
  const byId = useMemo(() => new Map(media.map((m) => [m.id, m])), [media]);
  const [draft, setDraft] = useState<PlaylistDraft>(original);
  const [said, setSaid] = useState<string | null>(null);
  const [focusAfterMove, setFocusAfterMove] = useState<string | null>(null);
  const [dragging, setDragging] = useState<number | null>(null);
  const [over, setOver] = useState<number | null>(null);
  const [playing, setPlaying] = useState(false);
  const problems = useMemo(() => draftProblems(draft), [draft]);
  const changed = !sameDraft(draft, original);
  const valid = Object.keys(problems).length === 0;
  // The preview plays the last draft without problems (a half-typed time would make it race).
  const [previewed, setPreviewed] = useState<PlaylistDraft>(original);
  useEffect(() => {
    if (valid) setPreviewed(draft);
  }, [draft, valid]);
  const pages = draft.pages;

  // A newer revision (applied by the CLI or the agent) replaces the page when the page holds no
  // changes of its own, or when the new revision is exactly the changes (the download was applied).
  const draftNow = useRef(draft);
  draftNow.current = draft;
  useEffect(() => {
    if (news?.kind !== 'updated') return;
    if (!changed) return onReload();
    let current = true;
    client.playlists.get(playlist.id).then(
      (r) => {
        if (current && sameDraft(draftOf(r.data), draftNow.current)) onReload();
      },
      () => {},
    );
    return () => {
      current = false;
    };
  }, [news, changed, onReload, client, playlist.id]);

  // After a move from the keyboard, focus stays on the moved page's button (or its other one at an end).
  useEffect(() => {
    if (!focusAfterMove) return;
    const [pageId, dir] = focusAfterMove.split('|');
    const same = document.getElementById(`move-${dir}-${pageId}`) as HTMLButtonElement | null;
    const other = document.getElementById(`move-${dir === 'up' ? 'down' : 'up'}-${pageId}`);
    (same && !same.disabled ? same : other)?.focus();
    setFocusAfterMove(null);
  }, [focusAfterMove]);

  const move = (from: number, to: number, viaKeyboard?: 'up' | 'down') => {
    if (to < 0 || to >= pages.length || from === to) return;
    const page = pages[from]!;
    setDraft({ ...draft, pages: movedTo(pages, from, to) });
    setSaid(`Page “${page.id}” moved to position ${to + 1} of ${pages.length}.`);
    if (viaKeyboard) setFocusAfterMove(`${page.id}|${viaKeyboard}`);
  };
  const setPage = (index: number, page: PageWrite) => setDraft(withPage(draft, index, () => page));

  const onDragOver = (e: DragEvent, index: number) => {
    if (dragging === null) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
    if (over !== index) setOver(index);
  };
  const onDrop = (e: DragEvent, index: number) => {
    e.preventDefault();
    if (dragging !== null) move(dragging, index);
    setDragging(null);
    setOver(null);
  };

  // Problems the form does not show under a field of its own: listed at the end, with their paths.
  const shown = (path: string) =>
    /^pages\.\d+\.(transition\.(type|duration_ms)|advance(\.(after_ms|max_ms))?|visibility(\..*)?)$/.test(path) ||
    /^audio(\.tracks(\.\d+\.media_id)?)?$/.test(path) ||
    path === 'pages';
  const other = Object.entries(problems).filter(([path]) => !shown(path));

  return (
    <>
      <p className="hint">
        Revision {playlist.revision}. {pages.length} page{pages.length === 1 ? '' : 's'}, played in this order and then
        again. Drag a page by its grip, or use its Move buttons, to change the order.
      </p>
      <Notice text={said} />
      {news && changed && (
        <div className="panel news" role="alert">
          {news.kind === 'deleted' ? (
            <p>This playlist was deleted; your changes can still be downloaded below.</p>
          ) : (
            <>
              <p>
                Revision {news.revision} of this playlist was written meanwhile (by your agent or the{' '}
                <code>marquee</code> command). Your changes are to revision {playlist.revision}.
              </p>
              <button type="button" className="secondary" onClick={onReload}>
                Load revision {news.revision} (drops your changes)
              </button>
            </>
          )}
        </div>
      )}
      <p id={`${fieldId(FORM, 'pages')}-problem`} className="field-problem">
        {problems.pages}
      </p>
      <ol className="page-list playlist-pages" aria-label="Pages">
        {pages.map((page, index) => {
          const label = `Page ${index + 1}`;
          return (
            <li
              key={page.id}
              className={`page-row editable${dragging === index ? ' dragging' : ''}${over === index && dragging !== index ? ' drop-target' : ''}`}
              data-testid="page-row"
              data-page-id={page.id}
              onDragOver={(e) => onDragOver(e, index)}
              onDrop={(e) => onDrop(e, index)}
            >
              <div className="page-head">
                <span
                  className="grip"
                  draggable
                  title="Drag to move this page"
                  aria-hidden="true"
                  onDragStart={(e) => {
                    setDragging(index);
                    e.dataTransfer.effectAllowed = 'move';
                    e.dataTransfer.setData('text/plain', page.id);
                    const row = e.currentTarget.closest('li');
                    if (row) e.dataTransfer.setDragImage(row, 16, 16);
                  }}
                  onDragEnd={() => {
                    setDragging(null);
                    setOver(null);
                  }}
                >
                  ⠿
                </span>
                <h2>
                  {label} <code>{page.id}</code>
                </h2>
                <span className="move-buttons">
                  <button
                    type="button"
                    className="quiet"
                    id={`move-up-${page.id}`}
                    disabled={index === 0}
                    aria-label={`Move up: ${label.toLowerCase()}, ${page.id}`}
                    onClick={() => move(index, index - 1, 'up')}
                  >
                    Move up
                  </button>
                  <button
                    type="button"
                    className="quiet"
                    id={`move-down-${page.id}`}
                    disabled={index === pages.length - 1}
                    aria-label={`Move down: ${label.toLowerCase()}, ${page.id}`}
                    onClick={() => move(index, index + 1, 'down')}
                  >
                    Move down
                  </button>
                </span>
              </div>
              <div className="page-body">
                <div className="page-picture">
                  <CanvasPreview page={page} label={label} items={items} />
                  <ul className="placements">
                    {page.placements.map((placement) => {
                      const resolved = items.get(`${page.id}/${placement.id}`) ?? [];
                      return (
                        <li key={placement.id}>
                          {placementSummary({
                            ...placement,
                            content: { ...placement.content, items: resolved } as never,
                            controller: placement.controller ?? false,
                          })}
                          {resolved[0] ? ` · ${byId.get(resolved[0].media_id)?.filename ?? resolved[0].media_id}` : ''}
                        </li>
                      );
                    })}
                  </ul>
                </div>
                <PageFields page={page} index={index} problems={problems} onChange={(p) => setPage(index, p)} />
              </div>
            </li>
          );
        })}
      </ol>

      <SoundtrackEditor
        audio={draft.audio}
        media={byId}
        problems={problems}
        onChange={(audio) => {
          const { audio: _, ...rest } = draft;
          setDraft(audio ? { ...rest, audio } : rest);
        }}
      />

      <section className="panel live-preview" aria-labelledby="preview-heading">
        <h2 id="preview-heading">Live preview</h2>
        <p className="hint">
          Plays {changed ? 'your changed' : 'this'} playlist in the player’s own engine, as a screen would: timings,
          transitions, visibility rules (in your time zone) and the soundtrack. Web pages and applications are not
          played here.
        </p>
        {!valid && (
          <p className="hint" data-testid="preview-held">
            Until the problems above are fixed, the preview plays the last version without problems.
          </p>
        )}
        {playing ? (
          <Suspense fallback={<p aria-busy="true">Loading the player…</p>}>
            <LivePreview
              draft={previewed}
              items={items}
              media={byId}
              playlistId={playlist.id}
              playlistRevision={playlist.revision}
              onStop={() => setPlaying(false)}
            />
          </Suspense>
        ) : (
          <button type="button" onClick={() => setPlaying(true)}>
            Play the preview
          </button>
        )}
      </section>

      {changed && (
        <ApplyPanel
          draft={draft}
          playlist={playlist}
          problems={Object.keys(problems).length}
          other={other}
          onDiscard={() => {
            setDraft(original);
            setSaid('Changes discarded.');
          }}
        />
      )}
    </>
  );
}

function ApplyPanel({
  draft,
  playlist,
  problems,
  other,
  onDiscard,
}: {
  draft: PlaylistDraft;
  playlist: Playlist;
  problems: number;
  other: [string, string][];
  onDiscard: () => void;
}) {
  const file = `${playlist.id}.json`;
  const [href, setHref] = useState<string | null>(null);
  useEffect(() => {
    if (problems > 0) return setHref(null);
    const url = URL.createObjectURL(new Blob([`${JSON.stringify(draft, null, 2)}\n`], { type: 'application/json' }));
    setHref(url);
    return () => URL.revokeObjectURL(url);
  }, [draft, problems]);
  return (
    <section className="panel apply" aria-labelledby="apply-heading">
      <h2 id="apply-heading">Apply the changes</h2>
      {problems > 0 ? (
        <>
          <p role="alert">
            {problems} problem{problems === 1 ? '' : 's'} to fix first; each is shown under its field.
          </p>
          {other.length > 0 && (
            <ul className="plain-list">
              {other.map(([path, text]) => (
                <li key={path}>
                  <code>{path}</code>: {text}
                </li>
              ))}
            </ul>
          )}
        </>
      ) : (
        <>
          <p>
            The dashboard does not save playlists: your project’s agent and the <code>marquee</code> command write them.
            Download the changed playlist and apply it with
          </p>
          <pre className="command">
            <code>
              npx marquee playlist update {playlist.id} {file} --if-match {playlist.revision}
            </code>
          </pre>
          <p className="hint">or give the file to your agent. Screens playing it change at their next page.</p>
          {href && (
            <a className="button" href={href} download={file}>
              Download {file}
            </a>
          )}
        </>
      )}
      <button type="button" className="secondary" onClick={onDiscard}>
        Discard changes
      </button>
    </section>
  );
}
