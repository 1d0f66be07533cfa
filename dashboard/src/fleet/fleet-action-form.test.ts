// The grid's fleet action form becomes the request the agent's route takes, or says what is missing.
import { describe, expect, it } from 'vitest';
import { ScreenActionRequest } from '../../../sdk/contract/fleet';
import { type FleetForm, fleetRequest } from './fleet-action-form';

const form = (change: Partial<FleetForm>): FleetForm => ({
  target: 'selected',
  ids: ['scr_a', 'scr_b'],
  tag: '',
  choice: 'reload',
  playlistId: '',
  until: '',
  reason: '',
  level: 'info',
  text: '',
  ...change,
});

describe('fleetRequest', () => {
  it('makes a takeover by tag the contract accepts, its end in UTC', () => {
    const request = fleetRequest(
      form({ target: 'tag', tag: 'lobby', choice: 'takeover', playlistId: 'pl_1', until: '2030-01-01T12:00' }),
    );
    expect('problem' in request).toBe(false);
    const valid = ScreenActionRequest.parse(request);
    expect(valid.selector).toEqual({ tag: 'lobby' });
    expect(valid.action).toMatchObject({
      type: 'takeover',
      playlist_id: 'pl_1',
      until: new Date('2030-01-01T12:00').toISOString(),
    });
  });

  it('maps display choices to the display actions and keeps the selected ids', () => {
    expect(fleetRequest(form({ choice: 'display_off' }))).toEqual({
      selector: { ids: ['scr_a', 'scr_b'] },
      action: { type: 'display', power: 'off' },
    });
  });

  it('says what is missing instead of sending a request the server would refuse', () => {
    expect(fleetRequest(form({ ids: [] }))).toEqual({ problem: 'Select at least one screen.' });
    expect(fleetRequest(form({ target: 'tag', tag: 'no spaces' }))).toHaveProperty('problem');
    expect(fleetRequest(form({ choice: 'toast', text: '  ' }))).toEqual({ problem: 'Write the toast’s message.' });
    expect(fleetRequest(form({ choice: 'takeover', playlistId: 'pl_1' }))).toEqual({
      problem: 'Choose when the takeover ends.',
    });
  });
});
