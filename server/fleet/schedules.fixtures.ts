// Schedule shapes shared by the tests of schedules and of what they make a manifest carry.

/** Monday 2026-11-23, 09:00 in Berlin: before the lunch window of the same day. */
export const MONDAY_MORNING_BERLIN = '2026-11-23T08:00:00Z';
export const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** A schedule entry that shows the playlist every day from 11:30 to 14:00 in the screen's zone. */
export const lunch = (playlistId: string) => ({
  id: 'lunch',
  playlist_id: playlistId,
  rule: { enabled: true, windows: [{ days: EVERY_DAY, start: '11:30', end: '14:00' }] },
});
