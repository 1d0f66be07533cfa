// The playlist's soundtrack: MP3 tracks played in order under every page, the list repeating.
// Tracks are added from the project's audio media, moved and removed; problems land on the track.
import { useState } from 'react';
import type { Media } from '../../../sdk/contract/media';
import type { AudioWrite } from '../../../sdk/contract/playlist';
import { duration } from '../app/format';
import { fieldId } from '../fleet/field-problems';
import { FieldProblem } from '../fleet/WindowsEditor';
import { FORM } from './PageFields';
import { movedTo } from './playlist-draft';

export function SoundtrackEditor({
  audio,
  media,
  problems,
  onChange,
}: {
  audio: AudioWrite | undefined;
  media: ReadonlyMap<string, Media>;
  problems: Record<string, string>;
  onChange: (audio: AudioWrite | undefined) => void;
}) {
  const tracks = audio?.tracks ?? [];
  const choices = [...media.values()].filter((m) => m.kind === 'audio');
  const [choice, setChoice] = useState('');
  const picked = choice || choices[0]?.id || '';
  const set = (next: { media_id: string }[]) => onChange(next.length > 0 ? { tracks: next } : undefined);
  const name = (id: string) => media.get(id)?.filename ?? id;
  return (
    <section className="panel soundtrack" aria-labelledby="soundtrack-heading">
      <h2 id="soundtrack-heading">Soundtrack</h2>
      <FieldProblem id={fieldId(FORM, 'audio')} text={problems.audio} />
      <FieldProblem id={fieldId(FORM, 'audio.tracks')} text={problems['audio.tracks']} />
      {tracks.length === 0 ? (
        <p className="hint">No soundtrack: screens play this playlist silently.</p>
      ) : (
        <ol className="tracks">
          {tracks.map((t, i) => {
            const m = media.get(t.media_id);
            return (
              // biome-ignore lint/suspicious/noArrayIndexKey: a track may be listed twice; its place is its identity
              <li key={`${t.media_id}-${i}`} className="track" id={fieldId(FORM, `audio.tracks.${i}.media_id`)}>
                <span className="track-name">
                  {name(t.media_id)}
                  {m?.duration_ms ? <span className="optional"> · {duration(m.duration_ms)}</span> : null}
                </span>
                <span className="track-actions">
                  <button
                    type="button"
                    className="quiet"
                    disabled={i === 0}
                    aria-label={`Up: track ${i + 1}, ${name(t.media_id)}`}
                    onClick={() => set(movedTo(tracks, i, i - 1))}
                  >
                    Up
                  </button>
                  <button
                    type="button"
                    className="quiet"
                    disabled={i === tracks.length - 1}
                    aria-label={`Down: track ${i + 1}, ${name(t.media_id)}`}
                    onClick={() => set(movedTo(tracks, i, i + 1))}
                  >
                    Down
                  </button>
                  <button
                    type="button"
                    className="quiet danger-text"
                    aria-label={`Remove: track ${i + 1}, ${name(t.media_id)}`}
                    onClick={() => set(tracks.filter((_, j) => j !== i))}
                  >
                    Remove
                  </button>
                </span>
                <FieldProblem
                  id={fieldId(FORM, `audio.tracks.${i}.media_id`)}
                  text={problems[`audio.tracks.${i}.media_id`]}
                />
              </li>
            );
          })}
        </ol>
      )}
      {choices.length > 0 ? (
        <div className="row">
          <label>
            Add a track
            <select value={picked} onChange={(e) => setChoice(e.currentTarget.value)}>
              {choices.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.filename}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="secondary" onClick={() => set([...tracks, { media_id: picked }])}>
            Add track
          </button>
        </div>
      ) : (
        <p className="hint">Upload MP3 files under Media to choose a soundtrack.</p>
      )}
    </section>
  );
}
