// Media: drop files (or choose them) to upload each with its own progress bar, and the project's
// ready media with what uses them. A delete says first which playlists still show the media.
import { Confirm } from '../app/Confirm';
import { type DragEvent, useMemo, useRef, useState } from 'react';
import { useStore } from 'zustand';
import { MEDIA_LIST_MAX_LIMIT, type Media } from '../../../sdk/contract/media';
import type { Playlist } from '../../../sdk/contract/playlist';
import { useDashboard } from '../app/dashboard-context';
import { byteSize, duration } from '../app/format';
import { Notice, PageHeading } from '../app/PageHeading';
import { useLoaded } from '../app/use-loaded';
import { GRID_GAP_REM, GRID_MIN_COLUMN_REM, type Cell, VirtualGrid } from '../app/VirtualGrid';
import { playlistsUsing } from '../playlists/playlist-summary';
import { usePlaylists } from '../playlists/use-playlists';
import { problemMessage } from '../state/problem-message';
import { createUploadQueue, progressOf, type Upload } from './upload-queue';

/** A project's list is read page by page up to this many items. */
const MEDIA_LIST_CAP = 2000;
/** A card with its thumbnail, facts, use and delete button, before it is measured. */
const MEDIA_ROW_ESTIMATE_PX = 308;

export function MediaPage() {
  const { client } = useDashboard();
  const media = useLoaded<Media[]>(
    async (partial) => {
      const items: Media[] = [];
      let cursor: string | undefined;
      do {
        const page = (await client.media.list({ limit: MEDIA_LIST_MAX_LIMIT, ...(cursor ? { cursor } : {}) })).data;
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
        // The first cards show while the rest of a long list is still being read.
        if (cursor) partial([...items]);
      } while (cursor && items.length < MEDIA_LIST_CAP);
      return items;
    },
    [client],
    'The media',
  );
  const playlists = usePlaylists();
  const queue = useMemo(() => createUploadQueue(client, () => media.reload()), [client, media.reload]);
  const [result, setResult] = useState<{ text: string; error: boolean } | null>(null);
  /** The media whose delete is being confirmed: here, not in its card, so it survives the card scrolling away. */
  const [confirming, setConfirming] = useState<string | null>(null);
  // Which playlists use each media, once per playlist list rather than once per card drawn.
  const usedBy = useMemo(() => {
    const map = new Map<string, Playlist[]>();
    for (const item of media.value ?? []) map.set(item.id, playlistsUsing(playlists.value ?? [], item.id));
    return map;
  }, [media.value, playlists.value]);

  return (
    <section className="page">
      <PageHeading>Media</PageHeading>
      <DropZone onFiles={(files) => queue.getState().add(files)} />
      <UploadList queue={queue} />
      <Notice text={result?.text ?? media.error} error={result?.error ?? Boolean(media.error)} />
      {media.value?.length === 0 && <p className="empty-state">No media yet. Add images, videos or MP3s above.</p>}
      <VirtualGrid
        items={media.value ?? []}
        itemKey={(item) => item.id}
        label="Media"
        className="media-grid"
        minColumnRem={GRID_MIN_COLUMN_REM}
        gapRem={GRID_GAP_REM}
        estimateRowPx={MEDIA_ROW_ESTIMATE_PX}
        renderItem={(item, cell) => (
          <MediaCard
            cell={cell}
            media={item}
            usedBy={usedBy.get(item.id) ?? []}
            confirming={confirming === item.id}
            onConfirm={(on) => setConfirming(on ? item.id : null)}
            onDeleted={(text) => {
              setResult({ text, error: false });
              setConfirming(null);
              media.reload();
            }}
            onFailed={(text) => {
              setConfirming(null);
              setResult({ text, error: true });
            }}
          />
        )}
      />
    </section>
  );
}

function DropZone({ onFiles }: { onFiles: (files: File[]) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    onFiles([...e.dataTransfer.files]);
  };
  return (
    <section
      aria-label="Upload media"
      className={`drop-zone${over ? ' over' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={drop}
      data-testid="drop-zone"
    >
      {/* A phone or tablet has nothing to drag files from: it is offered the button alone. */}
      <p>
        <span className="drag-hint">Drop images (PNG, JPEG, WebP, GIF), videos (MP4, WebM) or MP3s here, or</span>
        <span className="touch-hint">Images (PNG, JPEG, WebP, GIF), videos (MP4, WebM) or MP3s:</span>
      </p>
      <label className="button">
        Choose files
        <input
          ref={input}
          type="file"
          multiple
          accept="image/png,image/jpeg,image/webp,image/gif,video/mp4,video/webm,audio/mpeg"
          className="visually-hidden"
          onChange={(e) => {
            onFiles([...(e.currentTarget.files ?? [])]);
            e.currentTarget.value = '';
          }}
        />
      </label>
    </section>
  );
}

const STAGE_TEXT: Record<Upload['stage'], string> = {
  queued: 'Waiting',
  hashing: 'Reading the file',
  uploading: 'Uploading',
  verifying: 'Checking the file',
  done: 'Ready',
  failed: 'Failed',
};

function UploadList({ queue }: { queue: ReturnType<typeof createUploadQueue> }) {
  const uploads = useStore(queue, (s) => s.uploads);
  if (uploads.length === 0) return null;
  return (
    <section className="uploads" aria-labelledby="uploads-heading">
      <h2 id="uploads-heading">Uploads</h2>
      <ul>
        {uploads.map((u) => (
          <li key={u.id} className={`upload ${u.stage}`} data-testid="upload">
            <span className="upload-name" title={u.name}>
              {u.name}
            </span>
            <progress max={1} value={progressOf(u)} aria-label={`${u.name}: ${STAGE_TEXT[u.stage]}`} />
            <span className="upload-stage">
              {STAGE_TEXT[u.stage]}
              {u.stage === 'uploading' ? ` ${byteSize(u.sent)} of ${byteSize(u.bytes)}` : ''}
              {u.error ? `: ${u.error}` : ''}
            </span>
          </li>
        ))}
      </ul>
      <button type="button" className="quiet" onClick={() => queue.getState().clearFinished()}>
        Clear finished
      </button>
    </section>
  );
}

function MediaCard({
  cell,
  media,
  usedBy,
  confirming,
  onConfirm,
  onDeleted,
  onFailed,
}: {
  cell: Cell;
  media: Media;
  usedBy: Playlist[];
  confirming: boolean;
  onConfirm: (on: boolean) => void;
  onDeleted: (text: string) => void;
  onFailed: (text: string) => void;
}) {
  const { client } = useDashboard();
  const content = `/dashboard/v1/media/${encodeURIComponent(media.id)}/content`;
  const remove = async () => {
    try {
      await client.media.delete(media.id);
      onDeleted(`Deleted ${media.filename}.`);
    } catch (error) {
      onFailed(problemMessage(error, `${media.filename} could not be deleted`));
    }
  };
  return (
    <li {...cell} className="media-card" data-testid="media-card">
      <div className="thumb">
        {media.kind === 'image' ? (
          <img src={content} alt="" loading="lazy" decoding="async" />
        ) : (
          <span className="kind">{media.kind}</span>
        )}
      </div>
      <h2 className="media-name">{media.filename}</h2>
      <p className="media-facts">
        {byteSize(media.bytes)}
        {media.width ? ` · ${media.width}×${media.height}` : ''}
        {media.duration_ms ? ` · ${duration(media.duration_ms)}` : ''}
        {media.tag ? ` · tag ${media.tag}` : ''}
      </p>
      <p className="media-use">
        {usedBy.length ? `In ${usedBy.map((p) => `“${p.name}”`).join(', ')}` : 'In no playlist'}
      </p>
      {!confirming ? (
        <button
          type="button"
          className="quiet danger-text"
          data-asks={`delete-${media.id}`}
          onClick={() => onConfirm(true)}
        >
          Delete…
        </button>
      ) : (
        <Confirm
          asker={`delete-${media.id}`}
          onCancel={() => onConfirm(false)}
          question={
            usedBy.length
              ? `Still used by ${usedBy.map((p) => `“${p.name}”`).join(', ')}. While a screen shows one of them the media cannot be deleted; remove it from those playlists first (your agent or the CLI writes playlists).`
              : 'No playlist uses it. Delete it for good?'
          }
        >
          <button type="button" className="danger" onClick={() => void remove()}>
            Delete {media.filename}
          </button>
        </Confirm>
      )}
    </li>
  );
}
