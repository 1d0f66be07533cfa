// Proof of play: what went on glass over a range of days, by day, by screen and by media or
// application, from the API's daily rows; and the same selection as the API's CSV export.
import { type FormEvent, useMemo, useState } from 'react';
import { PLAYBACK_PAGE_MAX, type PlaybackRow } from '../../../sdk/contract/playback';
import { useDashboard, useScreens } from '../app/dashboard-context';
import { Notice, PageHeading } from '../app/PageHeading';
import { useLoaded } from '../app/use-loaded';
import { sortedScreens } from '../state/screens-store';
import { DayChart, RankChart } from './Charts';
import {
  byContent,
  byDay,
  byScreen,
  csvUrl,
  defaultRange,
  type Measure,
  measureText,
  rangeProblem,
  ROWS_MAX,
  topWithOthers,
  totalOf,
} from './proof-data';
import './proof.css';

/** Bars a ranked chart shows before it sums the rest. */
const RANKED_BARS = 10;

interface Filter {
  from: string;
  to: string;
  screen_id?: string;
}

export default function ProofOfPlayPage() {
  const { client } = useDashboard();
  const byId = useScreens((s) => s.byId);
  // Derived once per change of the store's screens, not per render: the sums below key on it.
  const screens = useMemo(() => sortedScreens(byId), [byId]);
  const [filter, setFilter] = useState<Filter>(() => defaultRange(new Date()));
  const [draft, setDraft] = useState<Filter>(filter);
  const [problem, setProblem] = useState<string | null>(null);
  const [measure, setMeasure] = useState<Measure>('plays');
  const rows = useLoaded<{ items: PlaybackRow[]; partial: boolean }>(
    async () => {
      const items: PlaybackRow[] = [];
      let cursor: string | undefined;
      do {
        const page = (
          await client.playback.list({ ...filter, limit: PLAYBACK_PAGE_MAX, ...(cursor ? { cursor } : {}) })
        ).data;
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor && items.length < ROWS_MAX);
      return { items, partial: cursor !== undefined };
    },
    [client, filter.from, filter.to, filter.screen_id],
    'Proof of play',
  );
  const names = useMemo(() => new Map(screens.map((s) => [s.id, s.label])), [screens]);
  const items = rows.value?.items ?? [];
  const days = useMemo(() => byDay(items, filter.from, filter.to), [items, filter.from, filter.to]);
  const perScreen = useMemo(() => topWithOthers(byScreen(items, names), RANKED_BARS), [items, names]);
  const perContent = useMemo(() => topWithOthers(byContent(items), RANKED_BARS), [items]);
  const total = totalOf(days);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    const wrong = rangeProblem(draft.from, draft.to);
    setProblem(wrong);
    if (!wrong) setFilter({ ...draft });
  };

  return (
    <section className="page proof">
      <PageHeading>Proof of play</PageHeading>
      <p className="hint">
        Every showing a screen reports, counted once, on the day it started in the screen's time zone. Players upload
        every half minute, and what they showed offline once they are back.
      </p>
      <form className="panel proof-filter" aria-label="Range" onSubmit={apply}>
        <div className="row">
          <label>
            <span>From</span>
            <input
              type="date"
              value={draft.from}
              required
              onChange={(e) => setDraft({ ...draft, from: e.currentTarget.value })}
            />
          </label>
          <label>
            <span>To</span>
            <input
              type="date"
              value={draft.to}
              required
              onChange={(e) => setDraft({ ...draft, to: e.currentTarget.value })}
            />
          </label>
          <label>
            <span>Screen</span>
            <select
              value={draft.screen_id ?? ''}
              onChange={(e) => setDraft({ ...draft, screen_id: e.currentTarget.value || undefined })}
            >
              <option value="">Every screen</option>
              {screens.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.label}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Show</button>
        </div>
        <p className="field-problem" role="alert">
          {problem}
        </p>
      </form>
      <div className="proof-bar">
        <fieldset className="measure">
          <legend>Measure</legend>
          <label>
            <input type="radio" name="measure" checked={measure === 'plays'} onChange={() => setMeasure('plays')} />
            Plays
          </label>
          <label>
            <input type="radio" name="measure" checked={measure === 'seconds'} onChange={() => setMeasure('seconds')} />
            Time on glass
          </label>
        </fieldset>
        <a className="button" href={csvUrl(filter)} download="playback.csv">
          Download CSV
        </a>
      </div>
      <Notice
        text={
          rows.error ??
          (rows.loading
            ? null
            : `${filter.from} to ${filter.to}: ${measureText(total.plays, 'plays')}, ${measureText(total.seconds, 'seconds')} on glass.`)
        }
        error={Boolean(rows.error)}
      />
      {rows.value?.partial && (
        <p className="hint">
          The charts show the first {ROWS_MAX.toLocaleString('en')} rows; choose fewer days or one screen to see all.
          The CSV has every row.
        </p>
      )}
      <div className="proof-charts" aria-busy={rows.loading}>
        <div className="wide">
          <DayChart title="By day" bars={days} measure={measure} />
        </div>
        <RankChart title="By screen" bars={perScreen} measure={measure} />
        <RankChart title="By media and application" bars={perContent} measure={measure} />
      </div>
    </section>
  );
}
