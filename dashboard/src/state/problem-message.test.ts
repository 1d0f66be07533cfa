import { describe, expect, it } from 'vitest';
import { OperationFailedError } from '../../../sdk/client/operations';
import { MarqueeProblem } from '../../../sdk/client/problem';
import type { Operation } from '../../../sdk/contract/operations';
import { fieldLabel, problemClause, problemMessage } from './problem-message';

describe('problemMessage', () => {
  it('says what a passkey refusal means instead of the browser’s wording', () => {
    const cancelled = new DOMException(
      'The operation either timed out or was not allowed. See: https://www.w3.org/TR/webauthn-2/#sctn-privacy-considerations-client.',
      'NotAllowedError',
    );
    const said = problemMessage(cancelled, 'Signing in with a passkey failed');
    expect(said).toBe(
      'Signing in with a passkey failed: no passkey was used (the request was cancelled, timed out, or this device has none for Marquee). Try again, or use your password.',
    );
    expect(problemMessage(new DOMException('already registered', 'InvalidStateError'), 'Adding a passkey failed')).toBe(
      'Adding a passkey failed: this device has a passkey for this login already.',
    );
  });

  it('says a problem’s detail as a sentence, and as it comes after other words', () => {
    const notFound = new MarqueeProblem(404, { code: 'not_found', detail: 'screen not found' });
    expect(problemMessage(notFound, 'x')).toBe('Screen not found');
    expect(problemClause(notFound, 'x')).toBe('screen not found');
    expect(
      problemMessage(new MarqueeProblem(412, { code: 'revision_conflict', detail: 'If-Match is stale' }), 'x'),
    ).toBe('If-Match is stale');
  });

  it('keeps a detail that starts with an id or a file name as written', () => {
    const inUse = new MarqueeProblem(409, { code: 'resource_conflict', detail: 'med_8Xk2 is shown by 2 playlists' });
    expect(problemMessage(inUse, 'x')).toBe('med_8Xk2 is shown by 2 playlists');
    const missing = new MarqueeProblem(422, { code: 'archive_rejected', detail: 'index.html is missing' });
    expect(problemMessage(missing, 'x')).toBe('index.html is missing');
    // A sentence's own full stop or colon after its first word is no identifier.
    const word = new MarqueeProblem(409, { code: 'resource_conflict', detail: 'conflict: try again' });
    expect(problemMessage(word, 'x')).toBe('Conflict: try again');
  });

  it('names each field of an invalid request in words, not by the path a program reads', () => {
    const problem = new MarqueeProblem(400, {
      code: 'invalid_request',
      detail: 'timezone: a playlist schedule is evaluated in the screen timezone; set it first',
      errors: [
        {
          field: 'timezone',
          code: 'required',
          detail: 'a playlist schedule is evaluated in the screen timezone; set it first',
        },
        { field: 'entries.0.rule.windows.1.start', code: 'invalid', detail: 'must be HH:MM' },
        { field: '', code: 'invalid', detail: 'send a JSON object' },
      ],
    });
    expect(problemMessage(problem, 'x')).toBe(
      'The screen’s time zone (under Settings): a playlist schedule is evaluated in the screen timezone; set it first; ' +
        'Entry 1, window 2, start: must be HH:MM; send a JSON object',
    );
  });

  it('names a field path in words', () => {
    expect(fieldLabel('entries.0.rule.windows.1.start')).toBe('entry 1, window 2, start');
    expect(fieldLabel('pages.2.advance.after_ms')).toBe('page 3, advance, after');
  });

  it('says why a background operation failed, without its id', () => {
    const operation = {
      id: 'op_1',
      state: 'failed',
      error: { status: 400, code: 'media_invalid', detail: 'the bytes are not a PNG image' },
    } as unknown as Operation;
    expect(problemMessage(new OperationFailedError(operation), 'The upload failed')).toBe(
      'The bytes are not a PNG image',
    );
  });

  it('falls back on the error’s message', () => {
    expect(problemMessage(new Error('boom'), 'Saving failed')).toBe('Saving failed: boom');
  });
});
