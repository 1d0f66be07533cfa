import { describe, expect, it } from 'vitest';
import type { ScreenPlaylistScheduleView } from '../contract/fleet';
import { scheduleBlocks, tagBlocks, type TagEdit } from './commands/fleet.commands';
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

describe('screen tag, for a person', () => {
  it('shows each edit it sent, adds then removes, and the tags after', () => {
    const screen = { screen_id: 'scr_1', status: 200, ok: true as const };
    const edit: TagEdit = {
      edits: [
        {
          action: 'add_tags',
          tags: ['lobby', 'north'],
          results: [{ ...screen, result: { tags: ['lobby', 'north'] } }],
          succeeded: 1,
          failed: 0,
        },
        {
          action: 'remove_tags',
          tags: ['nothere'],
          results: [{ ...screen, result: { tags: ['lobby', 'north'] } }],
          succeeded: 1,
          failed: 0,
        },
      ],
      screen_tags: ['lobby', 'north'],
    };
    const text = renderBlocks(tagBlocks(edit));
    expect(text).toMatch(/add_tags\s+lobby, north\s+done/);
    expect(text).toMatch(/remove_tags\s+nothere\s+done/);
    expect(text).toMatch(/tags now:\s+lobby, north/);
  });

  it('shows an edit the server refused with its reason, and no tags when none went through', () => {
    const edit: TagEdit = {
      edits: [
        {
          action: 'add_tags',
          tags: ['lobby'],
          results: [
            { screen_id: 'scr_x', status: 404, ok: false, problem: { code: 'not_found', detail: 'no such screen' } },
          ],
          succeeded: 0,
          failed: 1,
        },
      ],
      screen_tags: null,
    };
    const text = renderBlocks(tagBlocks(edit));
    expect(text).toMatch(/add_tags\s+lobby\s+no such screen/);
    expect(text).toMatch(/tags now:\s+-/);
  });
});
