import { describe, expect, it } from 'vitest';
import { IDLE, leftOutText, outcomeLines, progressText, progressValue } from './app-upload';

describe('the upload’s progress line', () => {
  it('says each stage and fills the bar while sending, full while the server checks', () => {
    const base = { ...IDLE, source: 'board.tar.gz', total: 2_000_000 };
    expect(progressText(IDLE)).toBe('');
    expect(progressText({ ...base, stage: 'packing' })).toBe('Packing board.tar.gz…');
    expect(progressText({ ...base, stage: 'uploading', sent: 500_000 })).toBe(
      'Uploading board.tar.gz: 500 KB of 2.0 MB',
    );
    expect(progressValue({ ...base, stage: 'uploading', sent: 500_000 })).toBe(0.25);
    expect(progressValue({ ...base, stage: 'processing' })).toBe(1);
    const accepted = { id: 'app_1', release_id: 'rel_1', operation_id: 'op_1' };
    expect(progressText({ ...base, stage: 'done', accepted })).toBe('Published board.tar.gz as release rel_1.');
    expect(progressText({ ...base, stage: 'failed', error: 'index.html is missing' })).toBe(
      'board.tar.gz was not published: index.html is missing',
    );
    expect(progressValue({ ...base, stage: 'failed' })).toBe(0);
  });
});

describe('what packing left out', () => {
  it('is said as `marquee app pack` says it, for a folder or zip packed here only', () => {
    expect(leftOutText({ ignored: ['.env', 'app.js.map'] })).toBe('Left out: .env, app.js.map.');
    expect(leftOutText({ ignored: [] })).toBe('Left out: nothing.');
    expect(leftOutText({ ignored: null })).toBe('');
  });

  it('goes with the published line to the page the upload lands on', () => {
    const accepted = { id: 'app_1', release_id: 'rel_1', operation_id: 'op_1' };
    expect(outcomeLines({ ...IDLE, source: 'site', stage: 'done', accepted, ignored: ['.env'] })).toEqual([
      'Published site as release rel_1.',
      'Left out: .env.',
    ]);
  });
});
