import { describe, expect, it } from 'vitest';
import { eventCalls, kvCalls, logCalls, pageCalls, type Request, type Send } from './child-calls';
import { BridgeError, IDEMPOTENCY_KEY_PATTERN, LOG_MESSAGE_MAX } from './protocol';

/** A request that records what it was asked and answers with `answer`. */
function recording(answer: (kind: string) => unknown = () => ({})) {
  const asked: Array<{ kind: string; fields: Record<string, unknown>; capability?: string }> = [];
  const request: Request = async (kind, fields, capability) => {
    asked.push({ kind, fields: fields as Record<string, unknown>, capability });
    const result = answer(kind);
    if (result instanceof Error) throw result;
    return result;
  };
  return { asked, request };
}

function sending() {
  const sent: Array<{ kind: string; fields: Record<string, unknown> }> = [];
  const send: Send = (kind, fields) => (sent.push({ kind, fields: fields as Record<string, unknown> }), true);
  return { sent, send };
}

describe('the KV calls of an application', () => {
  it('asks with the capability each call needs', async () => {
    const { asked, request } = recording();
    const kv = kvCalls(request);
    await kv.get('greeting');
    await kv.list({ cursor: 'next' });
    await kv.list();
    await kv.set('greeting', 'héllo', { expectedRevision: 2 });
    await kv.delete('greeting', 3);
    expect(asked.map((a) => [a.kind, a.capability])).toEqual([
      ['kv.get', 'kv.read'],
      ['kv.list', 'kv.read'],
      ['kv.list', 'kv.read'],
      ['kv.set', 'kv.write'],
      ['kv.delete', 'kv.write'],
    ]);
    expect(asked[1]!.fields).toEqual({ cursor: 'next' });
    expect(asked[2]!.fields).toEqual({});
  });

  it('sends text as UTF-8 base64 with its content type and a fresh idempotency key, bytes as they are', async () => {
    const { asked, request } = recording();
    const kv = kvCalls(request);
    await kv.set('t', 'héllo');
    await kv.set('b', new Uint8Array([0, 255, 7]));
    const [text, bytes] = asked.map((a) => a.fields);
    expect(text).toMatchObject({ key: 't', content_type: 'text/plain; charset=utf-8' });
    expect(kv.text({ value_base64: text!.value_base64 as string })).toBe('héllo');
    expect(text).not.toHaveProperty('expected_revision');
    expect(bytes).toMatchObject({ value_base64: 'AP8H', content_type: 'application/octet-stream' });
    expect(text!.idempotency_key).toMatch(IDEMPOTENCY_KEY_PATTERN);
    expect(text!.idempotency_key).not.toBe(bytes!.idempotency_key);
  });

  it('reads a missing key as null and refuses a key the player would refuse before asking', async () => {
    const { asked, request } = recording(() => new BridgeError('not_found', 'no such key'));
    const kv = kvCalls(request);
    expect(await kv.get('missing')).toBeNull();
    await expect(kv.get('')).rejects.toMatchObject({ code: 'invalid_key', status: 400 });
    await expect(kv.set('ok', 42 as unknown as string)).rejects.toMatchObject({ code: 'invalid_payload' });
    expect(asked).toHaveLength(1);
  });
});

describe('page, event and log calls', () => {
  it('asks for page.advance with its capability', async () => {
    const { asked, request } = recording();
    await pageCalls(request).advance();
    expect(asked).toEqual([{ kind: 'page.advance', fields: {}, capability: 'page.advance' }]);
  });

  it('sends events and logs without waiting, refusing codes outside the pattern', () => {
    const { sent, send } = sending();
    expect(eventCalls(send).emit('visitor.counted')).toBe(true);
    expect(() => eventCalls(send).emit('no spaces')).toThrow(BridgeError);
    const log = logCalls(send);
    log.warn('x'.repeat(LOG_MESSAGE_MAX + 10));
    log.info('hello', 'greeting');
    expect(() => log.error('bad', 'no spaces')).toThrow(BridgeError);
    expect(sent.map((s) => [s.kind, s.fields.level, s.fields.code])).toEqual([
      ['event.emit', undefined, 'visitor.counted'],
      ['log', 'warn', 'app'],
      ['log', 'info', 'greeting'],
    ]);
    expect((sent[1]!.fields.message as string).length).toBe(LOG_MESSAGE_MAX);
    expect(Object.isFrozen(log)).toBe(true);
  });
});
