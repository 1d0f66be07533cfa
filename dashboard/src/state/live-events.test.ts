// Frames of the event stream as events: the catalog's types with the details they promise, unknown
// types kept, broken ones dropped.
import { describe, expect, it } from 'vitest';
import { eventOf } from './live-events';

const base = { cursor: 'c', sequence: 3, severity: 'info', message: 'm', at: '2026-11-25T12:00:00Z' };

describe('eventOf', () => {
  it('takes an event of the catalog whose details match its type', () => {
    const record = { ...base, type: 'media.deleted', details: { bytes: 10, tag: null } };
    expect(eventOf(record)).toMatchObject({ type: 'media.deleted', details: { bytes: 10 } });
  });

  it('drops a known type whose details break its schema', () => {
    expect(eventOf({ ...base, type: 'media.deleted', details: { bytes: 'ten' } })).toBeUndefined();
  });

  it('keeps a type a newer server sends', () => {
    expect(eventOf({ ...base, type: 'screenshot.ready', details: { x: 1 } })).toMatchObject({
      type: 'screenshot.ready',
    });
  });

  it('ignores data that is not an event (stream control without a payload)', () => {
    expect(eventOf(undefined)).toBeUndefined();
    expect(eventOf({ type: 'x' })).toBeUndefined();
  });
});
