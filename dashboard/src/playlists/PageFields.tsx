// A page's settings: its transition, how it advances, and when it is shown. Each input's id is its
// field path, so a problem the contract's schema names appears under it.
import type { AdvanceWrite, PageWrite } from '../../../sdk/contract/playlist';
import { TRANSITION_TYPES } from '../../../sdk/contract/playlist';
import type { Visibility } from '../../../sdk/contract/visibility';
import { fieldId } from '../fleet/field-problems';
import { newWindow, windowDraft, windowOf } from '../fleet/schedule-drafts';
import { FieldProblem, invalidProps, WindowsEditor } from '../fleet/WindowsEditor';
import { advanceIn, msFromSeconds, secondsOf, withVisibility } from './playlist-draft';

export const FORM = 'playlist';

const TRANSITION_NAMES: Record<(typeof TRANSITION_TYPES)[number], string> = {
  crossfade: 'Crossfade',
  'swipe-left': 'Swipe left',
  'swipe-right': 'Swipe right',
  'swipe-up': 'Swipe up',
  'swipe-down': 'Swipe down',
};

const ADVANCE_NAMES: Record<AdvanceWrite['mode'], string> = {
  duration: 'After a set time',
  media_end: 'When its video or image ends',
  application: 'When its application moves on',
};

export function PageFields({
  page,
  index,
  problems,
  onChange,
}: {
  page: PageWrite;
  index: number;
  problems: Record<string, string>;
  onChange: (page: PageWrite) => void;
}) {
  const at = (f: string) => `pages.${index}.${f}`;
  const id = (f: string) => fieldId(FORM, at(f));
  const field = (f: string) => invalidProps(id(f), problems[at(f)]);
  const problem = (f: string) => <FieldProblem id={id(f)} text={problems[at(f)]} />;
  const advance = page.advance;
  const visibility = page.visibility;
  const setVisibility = (change: Partial<Visibility> | null) => onChange(withVisibility(page, change));
  return (
    <div className="page-fields">
      <div className="row">
        <label>
          Transition
          <select
            value={page.transition.type}
            onChange={(e) =>
              onChange({
                ...page,
                transition: { ...page.transition, type: e.currentTarget.value as PageWrite['transition']['type'] },
              })
            }
            {...field('transition.type')}
          >
            {TRANSITION_TYPES.map((t) => (
              <option key={t} value={t}>
                {TRANSITION_NAMES[t]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Transition seconds
          <input
            type="number"
            inputMode="decimal"
            min={0}
            max={60}
            step={0.1}
            value={secondsOf(page.transition.duration_ms)}
            onChange={(e) =>
              onChange({
                ...page,
                transition: { ...page.transition, duration_ms: msFromSeconds(e.currentTarget.value) },
              })
            }
            {...field('transition.duration_ms')}
          />
        </label>
      </div>
      {problem('transition.type')}
      {problem('transition.duration_ms')}
      <div className="row">
        <label>
          Moves on
          <select
            value={advance.mode}
            onChange={(e) =>
              onChange({ ...page, advance: advanceIn(e.currentTarget.value as AdvanceWrite['mode'], advance) })
            }
            {...field('advance')}
          >
            {(Object.keys(ADVANCE_NAMES) as AdvanceWrite['mode'][]).map((m) => (
              <option key={m} value={m}>
                {ADVANCE_NAMES[m]}
              </option>
            ))}
          </select>
        </label>
        {advance.mode === 'duration' ? (
          <label>
            Seconds on glass
            <input
              type="number"
              inputMode="decimal"
              min={1}
              step={1}
              value={secondsOf(advance.after_ms)}
              onChange={(e) =>
                onChange({ ...page, advance: { mode: 'duration', after_ms: msFromSeconds(e.currentTarget.value) } })
              }
              {...field('advance.after_ms')}
            />
          </label>
        ) : (
          <label>
            At most (seconds)
            <input
              type="number"
              inputMode="decimal"
              min={1}
              step={1}
              value={secondsOf(advance.max_ms)}
              onChange={(e) => {
                const text = e.currentTarget.value;
                onChange({
                  ...page,
                  advance:
                    advance.mode === 'media_end' && text.trim() === ''
                      ? { mode: 'media_end' }
                      : ({ mode: advance.mode, max_ms: msFromSeconds(text) } as AdvanceWrite),
                });
              }}
              {...field('advance.max_ms')}
            />
          </label>
        )}
      </div>
      {problem('advance')}
      {problem('advance.after_ms')}
      {problem('advance.max_ms')}
      <label className="inline">
        <input
          type="checkbox"
          checked={visibility !== undefined}
          onChange={(e) =>
            setVisibility(e.currentTarget.checked ? { enabled: true, windows: [windowOf(newWindow())] } : null)
          }
        />
        Shown only at some times
      </label>
      {visibility && (
        <fieldset className="windows visibility">
          <legend>When page {index + 1} is shown</legend>
          {problem('visibility')}
          <label className="inline">
            <input
              type="checkbox"
              checked={visibility.enabled}
              onChange={(e) => setVisibility({ enabled: e.currentTarget.checked })}
              {...field('visibility.enabled')}
            />
            Rule on (off: shown at all times)
          </label>
          <div className="row">
            <label>
              <span>
                From date <span className="optional">(optional)</span>
              </span>
              <input
                type="datetime-local"
                value={visibility.from ?? ''}
                onChange={(e) => setVisibility({ from: e.currentTarget.value || undefined })}
                {...field('visibility.from')}
              />
            </label>
            <label>
              <span>
                Until date <span className="optional">(optional)</span>
              </span>
              <input
                type="datetime-local"
                value={visibility.until ?? ''}
                onChange={(e) => setVisibility({ until: e.currentTarget.value || undefined })}
                {...field('visibility.until')}
              />
            </label>
          </div>
          {problem('visibility.from')}
          {problem('visibility.until')}
          <WindowsEditor
            windows={(visibility.windows ?? []).map(windowDraft)}
            onChange={(windows) => setVisibility({ windows: windows.length > 0 ? windows.map(windowOf) : undefined })}
            path={at('visibility.windows')}
            idPrefix={FORM}
            problems={problems}
            legend="Days and hours"
          />
        </fieldset>
      )}
    </div>
  );
}
