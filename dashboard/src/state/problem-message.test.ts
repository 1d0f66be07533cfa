import { describe, expect, it } from 'vitest';
import { OperationFailedError } from '../../../sdk/client/operations';
import { MarqueeProblem } from '../../../sdk/client/problem';
import type { Operation } from '../../../sdk/contract/operations';
import { problemMessage } from './problem-message';

describe('problemMessage', () => {
  it('says a problem’s detail', () => {
    expect(problemMessage(new MarqueeProblem(404, { code: 'not_found', detail: 'screen not found' }), 'x')).toBe(
      'screen not found',
    );
  });

  it('says why a background operation failed, without its id', () => {
    const operation = {
      id: 'op_1',
      state: 'failed',
      error: { status: 400, code: 'media_invalid', detail: 'the bytes are not a PNG image' },
    } as unknown as Operation;
    expect(problemMessage(new OperationFailedError(operation), 'The upload failed')).toBe(
      'the bytes are not a PNG image',
    );
  });

  it('falls back on the error’s message', () => {
    expect(problemMessage(new Error('boom'), 'Saving failed')).toBe('Saving failed: boom');
  });
});
