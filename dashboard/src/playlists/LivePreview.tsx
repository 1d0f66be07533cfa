// The live preview: the player's own playback engine and soundtrack (player/src), mounted on a stage
// in the page and fed the draft as a manifest (preview-manifest.ts). A lazily loaded chunk: the
// dashboard's first load carries none of it. Each change builds the engine afresh, so the preview
// starts again from the first page. Media come from the dashboard's own content route.
import { useEffect, useMemo, useRef, useState } from 'react';
import type { Media } from '../../../sdk/contract/media';
import type { PlaylistMediaItem } from '../../../sdk/contract/playlist';
import { PlaybackEngine } from '../../../player/src/playback/playback-engine';
import { SoundtrackPlayer } from '../../../player/src/soundtrack/soundtrack-player';
import type { PlaylistDraft } from './playlist-draft';
import { previewable, previewManifest } from './preview-manifest';
import './live-preview.css';

/** How often the caption reads which page is on glass. */
const READ_LIVE_PAGE_MS = 200;

export default function LivePreview({
  draft,
  items,
  media,
  playlistId,
  playlistRevision,
  onStop,
}: {
  draft: PlaylistDraft;
  items: ReadonlyMap<string, PlaylistMediaItem[]>;
  media: ReadonlyMap<string, Media>;
  playlistId: string;
  playlistRevision: number;
  onStop: () => void;
}) {
  const stage = useRef<HTMLDivElement>(null);
  const builds = useRef(0);
  const [live, setLive] = useState<string | null>(null);
  const [sound, setSound] = useState(false);
  const soundtrackRef = useRef<SoundtrackPlayer | null>(null);
  const soundRef = useRef(sound);
  soundRef.current = sound;
  const manifest = useMemo(() => {
    builds.current += 1;
    return previewManifest({
      draft,
      items,
      media,
      playlistId,
      playlistRevision,
      revision: builds.current,
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      now: new Date(),
    });
  }, [draft, items, media, playlistId, playlistRevision]);

  useEffect(() => {
    const root = stage.current!;
    const soundtrack = new SoundtrackPlayer(root);
    soundtrack.element.muted = !soundRef.current;
    soundtrackRef.current = soundtrack;
    const engine = new PlaybackEngine(root, {
      runtimeOrigin: location.origin,
      paired: false,
      screenId: 'preview',
      now: () => Date.now(),
      launch: () => Promise.reject(new Error('the preview plays no applications')),
      onActivated: (m) => soundtrack.set(m.soundtrack),
      onApplicationEvent: () => {},
      log: () => {},
    });
    engine.setManifest(manifest);
    const timer = setInterval(() => setLive(engine.livePageId), READ_LIVE_PAGE_MS);
    return () => {
      clearInterval(timer);
      engine.destroy();
      soundtrack.destroy();
      soundtrackRef.current = null;
      setLive(null);
    };
  }, [manifest]);

  useEffect(() => {
    if (soundtrackRef.current) soundtrackRef.current.element.muted = !sound;
  }, [sound]);

  const first = manifest.pages[0]?.canvas ?? { width: 16, height: 9 };
  const index = manifest.pages.findIndex((p) => p.id === live);
  const skipped = manifest.pages.filter((p) => !previewable(p)).map((p) => p.id);
  return (
    <div className="live-preview-body">
      <div
        ref={stage}
        className="live-stage"
        data-testid="live-stage"
        role="img"
        aria-label={live ? `Preview showing page ${index + 1}, ${live}` : 'Preview starting'}
        style={{
          aspectRatio: `${first.width} / ${first.height}`,
          ['--aspect' as string]: String(first.width / first.height),
        }}
      />
      <p className="live-caption" data-testid="live-page" data-page-id={live ?? ''}>
        {live ? (
          <>
            Now showing page {index + 1} of {manifest.pages.length}, <code>{live}</code>
          </>
        ) : (
          'Getting the first page ready…'
        )}
      </p>
      {skipped.length > 0 && (
        <p className="hint">Not in the preview (nothing it can play): {skipped.map((id) => `“${id}”`).join(', ')}.</p>
      )}
      <div className="row">
        {manifest.soundtrack && (
          <label className="inline">
            <input type="checkbox" checked={sound} onChange={(e) => setSound(e.currentTarget.checked)} />
            Play the soundtrack aloud
          </label>
        )}
        <button type="button" className="secondary" onClick={onStop}>
          Stop the preview
        </button>
      </div>
    </div>
  );
}
