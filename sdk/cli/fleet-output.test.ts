import { describe, expect, it } from 'vitest';
import type { ScreenPlaylistScheduleView } from '../contract/fleet';
import { scheduleBlocks } from './commands/fleet.commands';
import { renderBlocks } from './human-output';

function schedule(source: ScreenPlaylistScheduleView['effective_playlist']['source']): ScreenPlaylistScheduleView {
  const takeover =
    source === 'takeover' ? { playlist_id: 'pl_drill', until: '2026-11-23T11:30:00Z', reason: 'Fire drill' } : null;
  return {
    entries: [],
    updated_at: null,
    effective_playlist: { playlist_id: source === 'none' ? null : 'pl_drill', source },
    next_boundary_at: takeover?.until ?? null,
    takeover,
  };
}

describe('screen schedule and takeover, for a person', () => {
  it('never says the assigned playlist plays while a takeover is in force', () => {
    const text = renderBlocks(scheduleBlocks(schedule('takeover')));
    expect(text).toMatch(/because of:\s+takeover/);
    expect(text).toContain('no schedule entries: the takeover plays until it ends');
    expect(text).not.toContain('assigned playlist plays');
  });

  it('says the assigned playlist plays when nothing else applies, and nothing plays without one', () => {
    expect(renderBlocks(scheduleBlocks(schedule('assignment')))).toContain(
      'no schedule entries: the assigned playlist plays',
    );
    expect(renderBlocks(scheduleBlocks(schedule('none')))).toContain(
      'no schedule entries and no assigned playlist: nothing plays',
    );
  });
});
