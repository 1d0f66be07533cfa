// The editor's document: made from the server's answer so it is a valid write, reordered by drag
// or buttons, and judged by the contract so each problem names its field.
import { describe, expect, it } from 'vitest';
import { PlaylistWrite } from '../../../sdk/contract/playlist';
import { answer } from './playlist.fixtures';
import {
  advanceIn,
  draftOf,
  draftProblems,
  movedTo,
  msFromSeconds,
  resolvedItems,
  withPage,
  withVisibility,
} from './playlist-draft';

describe('draftOf', () => {
  it('is a valid write document: response-only members (items, controller, durations) are dropped', () => {
    const draft = draftOf(answer);
    expect(PlaylistWrite.safeParse(draft).success).toBe(true);
    expect(draft.pages.map((p) => p.id)).toEqual(['morning', 'noon', 'evening']);
    expect(draft.pages[0]!.placements[0]).not.toHaveProperty('controller');
    expect(draft.pages[0]!.placements[0]!.content).not.toHaveProperty('items');
    expect(draft.audio).toEqual({ tracks: [{ media_id: 'med_song' }] });
    expect(draftProblems(draft)).toEqual({});
  });

  it('leaves out the deadline the server computed for a media_end page', () => {
    const video = {
      ...answer,
      pages: [
        {
          ...answer.pages[0]!,
          advance: { mode: 'media_end', max_ms: 31_000 },
          placements: [
            {
              ...answer.pages[0]!.placements[0]!,
              content: { ...answer.pages[0]!.placements[0]!.content, dwell_ms: 30_000 },
            },
          ],
        },
      ],
    } as typeof answer;
    const draft = draftOf(video);
    expect(draft.pages[0]!.advance).toEqual({ mode: 'media_end' });
    expect(draftProblems(draft)).toEqual({});
  });

  it('keeps what each placement resolved to by page and placement, whatever the order', () => {
    expect(
      resolvedItems(answer)
        .get('noon/pic')
        ?.map((i) => i.media_id),
    ).toEqual(['med_b']);
  });
});

describe('movedTo', () => {
  it('takes an item out and puts it at the target index (down and up)', () => {
    expect(movedTo(['a', 'b', 'c', 'd'], 0, 2)).toEqual(['b', 'c', 'a', 'd']);
    expect(movedTo(['a', 'b', 'c', 'd'], 3, 1)).toEqual(['a', 'd', 'b', 'c']);
    expect(movedTo(['a', 'b', 'c'], 2, 1)).toEqual(['a', 'c', 'b']);
  });

  it('leaves the list as it is for a move out of range or onto itself', () => {
    expect(movedTo(['a', 'b'], 0, 2)).toEqual(['a', 'b']);
    expect(movedTo(['a', 'b'], -1, 0)).toEqual(['a', 'b']);
    expect(movedTo(['a', 'b'], 1, 1)).toEqual(['a', 'b']);
  });
});

describe('draftProblems', () => {
  it('names the field of a too-short duration and a too-long transition by their paths', () => {
    let draft = draftOf(answer);
    draft = withPage(draft, 1, (p) => ({ ...p, advance: { mode: 'duration', after_ms: msFromSeconds('0.5') } }));
    draft = withPage(draft, 2, (p) => ({ ...p, transition: { ...p.transition, duration_ms: 61_000 } }));
    const problems = draftProblems(draft);
    expect(Object.keys(problems).sort()).toEqual(['pages.1.advance.after_ms', 'pages.2.transition.duration_ms']);
  });

  it('says a duration’s bounds in seconds, the unit the field is typed in, not the schema’s milliseconds', () => {
    let draft = draftOf(answer);
    draft = withPage(draft, 1, (p) => ({ ...p, advance: { mode: 'duration', after_ms: msFromSeconds('0') } }));
    draft = withPage(draft, 2, (p) => ({ ...p, transition: { ...p.transition, duration_ms: 61_000 } }));
    const problems = draftProblems(draft);
    expect(problems['pages.1.advance.after_ms']).toBe('at least 1 second');
    expect(problems['pages.2.transition.duration_ms']).toBe('at most 60 seconds');
  });

  it('names the page list when every page has a visibility rule', () => {
    const rule = { enabled: true, windows: [{ days: ['mon'] }] };
    let draft = draftOf(answer);
    for (const i of [0, 1, 2]) draft = withPage(draft, i, (p) => ({ ...p, visibility: rule as never }));
    expect(draftProblems(draft).pages).toMatch(/at least one ordinary page must have no visibility rule/);
  });

  it('names an emptied seconds field rather than passing it', () => {
    const draft = withPage(draftOf(answer), 0, (p) => ({
      ...p,
      advance: { mode: 'duration', after_ms: msFromSeconds('') },
    }));
    expect(draftProblems(draft)).toHaveProperty(['pages.0.advance.after_ms'], 'enter a number of seconds');
  });
});

describe('advanceIn', () => {
  it('keeps the time when the mode changes, and a default where there was none', () => {
    expect(advanceIn('application', { mode: 'duration', after_ms: 12_000 })).toEqual({
      mode: 'application',
      max_ms: 12_000,
    });
    expect(advanceIn('duration', { mode: 'media_end' })).toEqual({ mode: 'duration', after_ms: 8000 });
    expect(advanceIn('media_end', { mode: 'duration', after_ms: 5000 })).toEqual({ mode: 'media_end', max_ms: 5000 });
  });
});

describe('withVisibility', () => {
  const plain = draftOf(answer).pages[0]!;

  it('adds an enabled rule, changes it member by member, and removes an unset member', () => {
    const ruled = withVisibility(plain, { windows: [{ days: ['mon'] }] });
    expect(ruled.visibility).toEqual({ enabled: true, windows: [{ days: ['mon'] }] });
    const dated = withVisibility(ruled, { from: '2030-01-01T00:00' });
    expect(dated.visibility).toEqual({ enabled: true, from: '2030-01-01T00:00', windows: [{ days: ['mon'] }] });
    const undated = withVisibility(dated, { from: undefined, windows: undefined });
    expect(undated.visibility).toEqual({ enabled: true });
    expect(Object.keys(undated.visibility!)).toEqual(['enabled']);
  });

  it('removes the rule', () => {
    const ruled = withVisibility(plain, { windows: [{ days: ['mon'] }] });
    expect(withVisibility(ruled, null)).not.toHaveProperty('visibility');
  });
});
