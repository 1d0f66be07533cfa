// Small charts drawn as SVG with their words in HTML, so they read at any width: columns a day
// (with the figures in a table under "Figures"), and ranked bars for screens and what played. Each
// is a figure named by its caption; the SVG is a picture of numbers the page also says in text.
import { useId } from 'react';
import { type Bar, type Measure, measured, measureText, niceMax } from './proof-data';

export function DayChart({ title, bars, measure }: { title: string; bars: Bar[]; measure: Measure }) {
  const id = useId();
  const top = niceMax(Math.max(0, ...bars.map((b) => measured(b, measure))));
  const width = Math.max(1, bars.length) * 10;
  const total = bars.reduce((sum, b) => sum + measured(b, measure), 0);
  const busiest = bars.reduce<Bar | undefined>(
    (best, b) => (!best || measured(b, measure) > measured(best, measure) ? b : best),
    undefined,
  );
  return (
    <figure className="chart" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>{title}</figcaption>
      <p className="chart-summary">
        {measureText(total, measure)} in all
        {busiest && measured(busiest, measure) > 0
          ? `; most on ${busiest.label} (${measureText(measured(busiest, measure), measure)})`
          : ''}
        .
      </p>
      <div className="day-chart">
        <span className="axis-top" aria-hidden="true">
          {measureText(top, measure)}
        </span>
        <svg viewBox={`0 0 ${width} 100`} preserveAspectRatio="none" aria-hidden="true" focusable="false">
          <line x1="0" x2={width} y1="0" y2="0" className="grid" />
          <line x1="0" x2={width} y1="100" y2="100" className="grid" />
          {bars.map((bar, i) => {
            const h = (measured(bar, measure) / top) * 100;
            return (
              <rect key={bar.key} x={i * 10 + 1.5} y={100 - h} width={7} height={h} className="bar">
                <title>{`${bar.label}: ${measureText(measured(bar, measure), measure)}`}</title>
              </rect>
            );
          })}
        </svg>
        <span className="axis-from" aria-hidden="true">
          {bars[0]?.label}
        </span>
        <span className="axis-to" aria-hidden="true">
          {bars.at(-1)?.label}
        </span>
      </div>
      <details className="figures">
        <summary>Figures</summary>
        <table className="table">
          <caption className="visually-hidden">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Plays</th>
              <th scope="col">Time on glass</th>
            </tr>
          </thead>
          <tbody>
            {bars.map((bar) => (
              <tr key={bar.key}>
                <th scope="row">{bar.label}</th>
                <td data-label="Plays">{bar.plays.toLocaleString('en')}</td>
                <td data-label="Time on glass">{measureText(bar.seconds, 'seconds')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

export function RankChart({ title, bars, measure }: { title: string; bars: Bar[]; measure: Measure }) {
  const id = useId();
  const top = Math.max(1, ...bars.map((b) => measured(b, measure)));
  return (
    <figure className="chart" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>{title}</figcaption>
      {bars.length === 0 ? (
        <p className="chart-summary">Nothing played in this range.</p>
      ) : (
        <ol className="rank-chart">
          {bars.map((bar) => (
            <li key={bar.key}>
              <span className="rank-label">{bar.label}</span>
              <span className="rank-value">{measureText(measured(bar, measure), measure)}</span>
              <svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
                <rect x="0" y="0" width="100" height="10" className="track" />
                <rect x="0" y="0" width={(measured(bar, measure) / top) * 100} height="10" className="bar" />
              </svg>
            </li>
          ))}
        </ol>
      )}
    </figure>
  );
}
