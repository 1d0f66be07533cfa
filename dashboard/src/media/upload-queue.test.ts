import { describe, expect, it } from 'vitest';
import { uploadRefusal } from './signed-put';
import { MarqueeNetworkError, MarqueeProblem } from '../../../sdk/client/problem';
import { progressOf, uploadFailure } from './upload-queue';

describe('an upload’s progress bar', () => {
  it('follows the bytes sent, then stays full while the server checks the file', () => {
    expect(progressOf({ sent: 0, bytes: 200, stage: 'queued' })).toBe(0);
    expect(progressOf({ sent: 50, bytes: 200, stage: 'uploading' })).toBe(0.25);
    expect(progressOf({ sent: 200, bytes: 200, stage: 'verifying' })).toBe(1);
    expect(progressOf({ sent: 0, bytes: 0, stage: 'uploading' })).toBe(0);
  });

  it('explains a refused PUT by its problem detail, else its status', () => {
    expect(uploadRefusal(403, JSON.stringify({ detail: 'this upload URL has expired' }))).toBe(
      'this upload URL has expired',
    );
    expect(uploadRefusal(502, '<html>')).toBe('the storage refused the upload (502)');
  });
});

describe('why an upload failed, after the list’s "Failed: "', () => {
  it('never says "failed" again', () => {
    expect(uploadFailure(new Error('this kind of file is not media Marquee plays (images, video, audio)'))).toBe(
      'this kind of file is not media Marquee plays (images, video, audio)',
    );
    expect(uploadFailure(new MarqueeNetworkError('fetch failed', 3))).toBe(
      'the server did not answer. Check the connection.',
    );
    const refused = new MarqueeProblem(413, {
      code: 'quota_exceeded',
      detail: 'the project has no room for this file',
    });
    expect(uploadFailure(refused)).toBe('the project has no room for this file');
  });
});
