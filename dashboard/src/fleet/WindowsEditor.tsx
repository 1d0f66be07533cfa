// Weekly windows of a rule (days, and a start and end time or all day), edited as rows. Each input's
// id is its field path, so problems the schema or the server name appear under it.
import { WEEKDAYS, type Weekday } from '../../../sdk/contract/visibility';
import { fieldId } from './field-problems';
import { newWindow, type WindowDraft } from './schedule-drafts';

const DAY_NAMES: Record<Weekday, string> = {
  mon: 'Mon',
  tue: 'Tue',
  wed: 'Wed',
  thu: 'Thu',
  fri: 'Fri',
  sat: 'Sat',
  sun: 'Sun',
};

export function FieldProblem({ id, text }: { id: string; text: string | undefined }) {
  return (
    <p id={`${id}-problem`} className="field-problem">
      {text}
    </p>
  );
}

/** aria props of an input whose field path may have a problem. */
export function invalidProps(id: string, text: string | undefined) {
  return { id, 'aria-invalid': text ? true : undefined, 'aria-describedby': `${id}-problem` } as const;
}

export function WindowsEditor({
  windows,
  onChange,
  path,
  idPrefix,
  problems,
  legend,
}: {
  windows: WindowDraft[];
  onChange: (windows: WindowDraft[]) => void;
  /** The field path of the windows array (`on`, `entries.0.rule.windows`). */
  path: string;
  idPrefix: string;
  problems: Record<string, string>;
  legend: string;
}) {
  const set = (i: number, change: Partial<WindowDraft>) =>
    onChange(windows.map((w, j) => (j === i ? { ...w, ...change } : w)));
  return (
    <fieldset className="windows">
      <legend>{legend}</legend>
      <FieldProblem id={fieldId(idPrefix, path)} text={problems[path]} />
      {windows.map((w, i) => {
        const at = `${path}.${i}`;
        const id = (f: string) => fieldId(idPrefix, f ? `${at}.${f}` : at);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: windows have no identity but their place
          <fieldset key={i} className="window-row">
            <legend>Window {i + 1}</legend>
            <div className="days" id={id('days')}>
              {WEEKDAYS.map((day) => (
                <label key={day} className="day">
                  <input
                    type="checkbox"
                    checked={w.days.includes(day)}
                    onChange={(e) =>
                      set(i, {
                        days: e.currentTarget.checked
                          ? WEEKDAYS.filter((d) => d === day || w.days.includes(d))
                          : w.days.filter((d) => d !== day),
                      })
                    }
                  />
                  {DAY_NAMES[day]}
                </label>
              ))}
            </div>
            <FieldProblem id={id('days')} text={problems[`${at}.days`]} />
            <div className="row">
              <label>
                From
                <input
                  type="time"
                  value={w.start}
                  onChange={(e) => set(i, { start: e.currentTarget.value })}
                  {...invalidProps(id('start'), problems[`${at}.start`])}
                />
              </label>
              <label>
                To
                <input
                  type="time"
                  value={w.end}
                  onChange={(e) => set(i, { end: e.currentTarget.value })}
                  {...invalidProps(id('end'), problems[`${at}.end`])}
                />
              </label>
              <button type="button" className="quiet" onClick={() => onChange(windows.filter((_, j) => j !== i))}>
                Remove window {i + 1}
              </button>
            </div>
            <FieldProblem id={id('start')} text={problems[`${at}.start`]} />
            <FieldProblem id={id('end')} text={problems[`${at}.end`]} />
            <FieldProblem id={id('')} text={problems[at]} />
          </fieldset>
        );
      })}
      <p className="hint">Empty times mean all day; an end before the start runs past midnight.</p>
      <button type="button" className="secondary" onClick={() => onChange([...windows, newWindow()])}>
        Add a window
      </button>
    </fieldset>
  );
}
