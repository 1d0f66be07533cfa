import { describe, expect, it } from 'vitest';
import {
  EVENT_TYPES,
  eventDetailsIssues,
  isRuntimeEventType,
  parseEventRecord,
  parseRuntimeEvent,
  type EventType,
} from './event-types';

const reload = {
  reason: 'project',
  reload_id: 'rld_abc',
  spread_s: 0,
  expires_at: '2026-11-21T12:10:00.000Z',
};

describe('the event catalog', () => {
  it('sends exactly the screen-facing types to the runtime stream (spec Events)', () => {
    const runtime = (Object.keys(EVENT_TYPES) as EventType[]).filter(isRuntimeEventType).sort();
    expect(runtime).toEqual([
      'player.reboot',
      'player.reload',
      'screen.archived',
      'screen.deleted',
      'screen.display_changed',
      'screen.manifest_changed',
      'screen.public_id_rotated',
      'screen.screenshot_requested',
      // Our addition (lockstep): the group's barrier for an application page's advance.
      'screen.sync_barrier',
      'screen.takeover_changed',
      'screen.toast',
      'screen.unarchived',
    ]);
  });

  it('checks the server’s details strictly: a wrong type, a missing member and an unknown member are all named', () => {
    expect(eventDetailsIssues('player.reload', reload)).toEqual([]);
    expect(eventDetailsIssues('player.reload', { ...reload, spread_s: '0' })).toEqual([
      expect.stringMatching(/^details\.spread_s: /),
    ]);
    expect(
      eventDetailsIssues('player.reload', { reason: 'project', spread_s: 0, expires_at: reload.expires_at }),
    ).toEqual([expect.stringMatching(/^details\.reload_id: /)]);
    expect(eventDetailsIssues('player.reload', { ...reload, extra: 1 })).toEqual([expect.stringMatching(/extra/)]);
    expect(eventDetailsIssues('project.updated', undefined)).toEqual([]);
    expect(eventDetailsIssues('project.updated', { any: 1 })).not.toEqual([]);
  });
});

describe('reading events', () => {
  it('types a runtime frame by its type and keeps members a newer server added', () => {
    const event = parseRuntimeEvent({ type: 'player.reload', cursor: 'c', details: { ...reload, priority: 'high' } });
    expect(event).toEqual({ type: 'player.reload', details: { ...reload, priority: 'high' } });
    if (event?.type !== 'player.reload') throw new Error('not a reload');
    expect(event.details.reload_id).toBe('rld_abc'); // narrowed: no cast
  });

  it('ignores types it does not know, account-only types, and details that break the schema', () => {
    expect(parseRuntimeEvent({ type: 'screen.takeover_started', details: {} })).toBeUndefined();
    expect(parseRuntimeEvent({ type: 'screen.updated', details: { revision: 2, changes: ['tags'] } })).toBeUndefined();
    expect(parseRuntimeEvent({ type: 'player.reload', details: { reason: 'project' } })).toBeUndefined();
    expect(parseRuntimeEvent('player.reload')).toBeUndefined();
    expect(parseRuntimeEvent(null)).toBeUndefined();
  });

  it('types account records for the CLI and dashboard, and leaves unknown types to the caller', () => {
    const record = {
      cursor: 'c1',
      sequence: 7,
      type: 'screen.updated',
      severity: 'info' as const,
      message: 'screen tags changed',
      at: '2026-11-21T12:00:00.000Z',
      details: { revision: 3, changes: ['tags'], tags: ['lobby'] },
    };
    const typed = parseEventRecord(record);
    expect(typed).toEqual(record);
    if (typed?.type !== 'screen.updated') throw new Error('not screen.updated');
    expect(typed.details.tags).toEqual(['lobby']);
    expect(parseEventRecord({ ...record, type: 'fleet.future' })).toBeUndefined();
    expect(parseEventRecord({ ...record, type: 'account.created', details: undefined })).toMatchObject({
      type: 'account.created',
    });
  });
});
