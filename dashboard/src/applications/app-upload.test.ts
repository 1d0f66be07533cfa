import { describe, expect, it } from 'vitest';
import { IDLE, progressText, progressValue } from './app-upload';

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
