// The events log's filter: by family (the part of the type before the dot), severity and text.
import type { EventRecord, EventSeverity } from '../../../sdk/contract/events';

export interface EventFilter {
  /** `screen`, `media`, … or '' for all. */
  family: string;
  severity: EventSeverity | '';
  /** Matched case-insensitively against the message, the type, the resource id and the actor. */
  text: string;
}

export const NO_FILTER: EventFilter = { family: '', severity: '', text: '' };

export function familyOf(type: string): string {
  return type.split('.')[0] ?? type;
}

export function matchesFilter(event: EventRecord, filter: EventFilter): boolean {
  if (filter.family && familyOf(event.type) !== filter.family) return false;
  if (filter.severity && event.severity !== filter.severity) return false;
  const text = filter.text.trim().toLowerCase();
  if (!text) return true;
  return [event.message, event.type, event.resource?.id ?? '', event.actor?.display_name ?? ''].some((field) =>
    field.toLowerCase().includes(text),
  );
}

/** The families present, sorted, for the filter's choices. */
export function familiesOf(events: readonly EventRecord[]): string[] {
  return [...new Set(events.map((e) => familyOf(e.type)))].sort();
}
