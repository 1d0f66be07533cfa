// Events: the project's log as it happens, newest first, filtered by family, severity and text.
import { useState } from 'react';
import { clockTime } from '../app/format';
import { useEvents } from '../app/dashboard-context';
import { PageHeading } from '../app/PageHeading';
import { type EventFilter, familiesOf, matchesFilter, NO_FILTER } from './event-filter';

export function EventsPage() {
  const items = useEvents((s) => s.items);
  const [filter, setFilter] = useState<EventFilter>(NO_FILTER);
  const shown = items.filter((e) => matchesFilter(e, filter));
  const families = familiesOf(items);
  return (
    <section className="page">
      <PageHeading>Events</PageHeading>
      <form className="filters" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
        <label>
          Kind
          <select value={filter.family} onChange={(e) => setFilter({ ...filter, family: e.currentTarget.value })}>
            <option value="">All</option>
            {families.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <select
            value={filter.severity}
            onChange={(e) => setFilter({ ...filter, severity: e.currentTarget.value as EventFilter['severity'] })}
          >
            <option value="">All</option>
            <option value="info">info</option>
            <option value="warning">warning</option>
            <option value="error">error</option>
          </select>
        </label>
        <label>
          Search
          <input
            type="search"
            value={filter.text}
            onChange={(e) => setFilter({ ...filter, text: e.currentTarget.value })}
          />
        </label>
      </form>
      <p className="hint" aria-live="polite">
        {shown.length} of {items.length} events
      </p>
      <ol className="event-log" aria-label="Events, newest first">
        {shown.map((event) => (
          <li key={event.sequence} className={`event ${event.severity}`} data-testid="event">
            <time dateTime={event.at}>{clockTime(event.at)}</time>
            <code className="event-type">{event.type}</code>
            <span className="event-message">{event.message}</span>
            {event.actor && <span className="event-actor">by {event.actor.display_name}</span>}
          </li>
        ))}
      </ol>
    </section>
  );
}
