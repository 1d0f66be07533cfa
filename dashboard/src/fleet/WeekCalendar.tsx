// A week at a glance: each rule's windows as coloured blocks on seven day columns, in the screen's
// civil time. A picture of the form below it (which is what a screen reader reads), so it is hidden
// from assistive technology and every block has a title for a pointer.
import { WEEKDAYS } from '../../../sdk/contract/visibility';
import { type CalendarBlock, clockOf, DAY_MINUTES } from './week-calendar';

/** Enough distinct hues for the entries a day usually has; later entries reuse them. */
const HUES = 8;

export function WeekCalendar({ blocks, names }: { blocks: CalendarBlock[]; names: string[] }) {
  return (
    <div className="week" aria-hidden="true" data-testid="week-calendar">
      <div className="week-hours">
        {[0, 6, 12, 18, 24].map((h) => (
          <span key={h} style={{ top: `${(h / 24) * 100}%` }}>
            {String(h).padStart(2, '0')}
          </span>
        ))}
      </div>
      {WEEKDAYS.map((day, d) => (
        <div key={day} className="week-day">
          <span className="week-day-name">{day}</span>
          <div className="week-column">
            {blocks
              .filter((b) => b.day === d)
              .map((b) => (
                <span
                  key={`${b.owner}-${b.start}`}
                  className={`week-block hue-${b.owner % HUES}`}
                  title={`${names[b.owner] ?? ''} ${clockOf(b.start)}–${clockOf(b.end)}`}
                  style={{
                    top: `${(b.start / DAY_MINUTES) * 100}%`,
                    height: `${((b.end - b.start) / DAY_MINUTES) * 100}%`,
                    left: `${Math.min(b.owner, 4) * 12}%`,
                  }}
                />
              ))}
          </div>
        </div>
      ))}
    </div>
  );
}
