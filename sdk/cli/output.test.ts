import { describe, expect, it } from 'vitest';
import { renderBlocks } from './human-output';
import { envelopeText, fields, renderError, table } from './output';
import { createProgress } from './progress';

describe('human output', () => {
  it('lines columns up in display cells, wide characters included', () => {
    const text = renderBlocks([
      table(
        ['id', 'label'],
        [
          ['scr_1', 'ロビー'],
          ['scr_22', 'Lobby'],
        ],
      ),
    ]);
    expect(text).toBe('ID      LABEL\nscr_1   ロビー\nscr_22  Lobby\n');
  });

  it('escapes control and bidi characters from the server in cells and fields, and cuts long cells', () => {
    const long = 'x'.repeat(60);
    const text = renderBlocks([
      table(['a', 'b'], [[`${long}\u001b[2J`, 'end\u202e']]),
      fields(['label', 'Evil\u009b31m']),
    ]);
    expect(text).not.toMatch(/[\u001b\u009b\u202e]/);
    expect(text).toContain('end\\u202e');
    expect(text).toContain('Evil\\u009b31m');
    expect(text).toContain(`${'x'.repeat(47)}…`);
  });

  it('says what to do about a stale revision', () => {
    expect(renderError({ code: 'revision_conflict', detail: 'stale', current_revision: 7 })).toContain(
      'retry with --if-match 7',
    );
  });
});

describe('the envelope', () => {
  it('is one line of JSON with the characters JSON leaves raw escaped', () => {
    const text = envelopeText({ ok: true, data: { label: 'a\u202eb\u0085c\nd' }, request_id: 'req_1' });
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trim().split('\n')).toHaveLength(1);
    expect(text).not.toMatch(/[\u202e\u0085]/);
    expect(JSON.parse(text).data.label).toBe('a\u202eb\u0085c\nd');
  });
});

describe('the progress line', () => {
  it('draws a bar per quarter off a terminal, and escapes what the server said', () => {
    const written: string[] = [];
    const stream = { write: (text: string) => written.push(text), columns: 80 } as unknown as NodeJS.WriteStream;
    const progress = createProgress(stream, 'upload a.png', false);
    for (const sent of [0, 100, 500, 999, 1000]) progress.update({ stage: 'upload', sent, total: 1000 });
    progress.update({
      stage: 'processing',
      sent: 1000,
      total: 1000,
      operation: {
        id: 'op_1',
        kind: 'media.upload',
        state: 'running\u001b[2J' as never,
        created_at: '',
        updated_at: '',
      },
    });
    expect(written).toEqual([
      'upload a.png [------------------------]   0% 0 B of 1000 B\n',
      'upload a.png [############------------]  50% 500 B of 1000 B\n',
      'upload a.png [########################]  99% 999 B of 1000 B\n',
      'upload a.png [########################] 100% 1000 B of 1000 B\n',
      'upload a.png: operation op_1 running\\u001b[2J\n',
    ]);
  });
});
