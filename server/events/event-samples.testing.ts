// Events of the catalog's own types with valid details, for tests of the log and its streams: tests
// tell events apart by type, so each stand-in type gets details its schema accepts.
import type { EventDetails, EventType } from '../../sdk/contract/event-types';
import type { NewEvent } from './event-log';

const SAMPLE_DETAILS: { [T in EventType]?: EventDetails<T> } = {
  'screen.updated': { revision: 2, changes: ['label'] },
  'screen.manifest_changed': { manifest_revision: 2, content_access_generation: 1, reason: 'playlist_assigned' },
  'player.reload': {
    reason: 'project',
    reload_id: 'rld_sample',
    spread_s: 0,
    expires_at: '2026-11-21T12:10:00.000Z',
  },
  'playlist.created': { revision: 1 },
  'playlist.updated': { revision: 2 },
  'playlist.deleted': { revision: 3 },
  'runtime.reported': { code: 'sample', severity: 'info', context: null },
};

export type SampleEvent = Partial<Omit<NewEvent, 'type' | 'details'>> & { type?: EventType; details?: unknown };

/** An event of `extra.type` (default project.updated, which has no details) with valid sample details. */
export function sampleEvent(tenantId: string, message: string, extra: SampleEvent = {}): NewEvent {
  const type = extra.type ?? 'project.updated';
  const details = 'details' in extra ? extra.details : SAMPLE_DETAILS[type];
  return { tenantId, message, ...extra, type, ...(details === undefined ? {} : { details }) } as NewEvent;
}
