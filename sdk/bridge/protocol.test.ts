import { describe, expect, it } from 'vitest';
import {
  BRIDGE_ERROR_CODES,
  checkChildPayload,
  checkParentPayload,
  decodeChildHandshake,
  decodeEnvelope,
  decodeParentHandshake,
  HANDSHAKE_PROTOCOL,
  MESSAGE_MAX_BYTES,
  newMessageId,
  randomToken,
} from './protocol';
import { playerOriginOf } from './trusted-parent';
import { KV_LIST_CURSOR_MAX } from '../contract/kv';

const NONCE = 'n'.repeat(32);

function envelope(
  overrides: Record<string, unknown> = {},
  payload: Record<string, unknown> = { generation: 1, nonce: NONCE },
) {
  return {
    protocol: '1',
    message_id: 'msg_0123456789abcdef',
    kind: 'page.advance',
    placement_id: 'board',
    payload,
    ...overrides,
  };
}

function code(data: unknown): string {
  const result = decodeEnvelope(data);
  return result.ok ? 'ok' : result.code;
}

describe('envelope decoding', () => {
  it('accepts an exact envelope as an object or as a JSON string', () => {
    expect(code(envelope())).toBe('ok');
    expect(code(JSON.stringify(envelope()))).toBe('ok');
  });

  it('refuses text that is not JSON', () => {
    expect(code('{"protocol":')).toBe('invalid_json');
  });

  it('refuses anything but an object', () => {
    for (const data of [null, 42, true, [envelope()], JSON.stringify([1]), '"text"'])
      expect(code(data)).toBe('invalid_shape');
  });

  it('refuses missing and extra envelope keys', () => {
    const { payload: _payload, ...missing } = envelope();
    expect(code(missing)).toBe('invalid_shape');
    expect(code({ ...envelope(), extra: 1 })).toBe('invalid_shape');
  });

  it('refuses __proto__, constructor and prototype keys at any depth, in objects and in JSON', () => {
    expect(
      code(
        `{"protocol":"1","message_id":"msg_0123456789","kind":"ready","placement_id":"board","payload":{"__proto__":{"x":1}}}`,
      ),
    ).toBe('invalid_shape');
    expect(code(envelope({}, { generation: 1, nonce: NONCE, deep: { constructor: 1 } }))).toBe('invalid_shape');
    expect(code(envelope({}, { generation: 1, nonce: NONCE, list: [{ prototype: 1 }] }))).toBe('invalid_shape');
    const withProto = JSON.parse('{"__proto__": 1}') as Record<string, unknown>;
    expect(code(envelope({}, { generation: 1, nonce: NONCE, x: withProto }))).toBe('invalid_shape');
  });

  it('refuses values that are not JSON data', () => {
    expect(code(envelope({}, { generation: 1, nonce: NONCE, at: new Date() }))).toBe('invalid_shape');
    expect(code(envelope({}, { generation: 1, nonce: NONCE, n: Number.NaN }))).toBe('invalid_shape');
    expect(code(envelope({}, { generation: 1, nonce: NONCE, m: new Map() }))).toBe('invalid_shape');
    expect(code(envelope({}, { generation: 1, nonce: NONCE, u: undefined }))).toBe('invalid_shape');
  });

  it('refuses nesting deeper than the cap', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(code(envelope({}, { generation: 1, nonce: NONCE, deep }))).toBe('invalid_shape');
  });

  it('caps objects and JSON strings at 64 KiB of UTF-8', () => {
    const fits = 'x'.repeat(
      MESSAGE_MAX_BYTES - JSON.stringify(envelope({}, { generation: 1, nonce: NONCE, pad: '' })).length,
    );
    expect(code(envelope({}, { generation: 1, nonce: NONCE, pad: fits }))).toBe('ok');
    expect(code(envelope({}, { generation: 1, nonce: NONCE, pad: `${fits}x` }))).toBe('message_too_large');
    expect(code(JSON.stringify(envelope({}, { generation: 1, nonce: NONCE, pad: `${fits}x` })))).toBe(
      'message_too_large',
    );
    // Multi-byte characters count as bytes, not UTF-16 units.
    const wide = 'é'.repeat(MESSAGE_MAX_BYTES / 2);
    expect(code(envelope({}, { generation: 1, nonce: NONCE, pad: wide }))).toBe('message_too_large');
    expect(code(JSON.stringify(envelope({}, { generation: 1, nonce: NONCE, pad: wide })))).toBe('message_too_large');
    // A huge array is refused by the estimate before it is serialized.
    expect(code(envelope({}, { generation: 1, nonce: NONCE, list: new Array(200_000).fill(0) }))).toBe(
      'message_too_large',
    );
  });

  it('names each malformed member', () => {
    expect(code(envelope({ protocol: '2' }))).toBe('protocol_mismatch');
    expect(code(envelope({ protocol: 1 }))).toBe('protocol_mismatch');
    expect(code(envelope({ message_id: 'short' }))).toBe('invalid_message_id');
    expect(code(envelope({ message_id: 'msg with spaces!' }))).toBe('invalid_message_id');
    expect(code(envelope({ kind: '' }))).toBe('invalid_kind');
    expect(code(envelope({ kind: 'k'.repeat(65) }))).toBe('invalid_kind');
    expect(code(envelope({ kind: 7 }))).toBe('invalid_kind');
    expect(code(envelope({ placement_id: '1board' }))).toBe('invalid_placement');
    expect(code(envelope({ payload: [] }))).toBe('invalid_payload');
    expect(code(envelope({ payload: 'x' }))).toBe('invalid_payload');
  });
});

describe('handshakes', () => {
  const challenge = randomToken(32);

  it('accepts exactly the parent handshake', () => {
    expect(decodeParentHandshake({ protocol: HANDSHAKE_PROTOCOL, kind: 'parent.handshake', challenge }).ok).toBe(true);
    for (const bad of [
      { protocol: HANDSHAKE_PROTOCOL, kind: 'parent.handshake', challenge, extra: 1 },
      { protocol: 'marquee.parent-handshake/2', kind: 'parent.handshake', challenge },
      { protocol: HANDSHAKE_PROTOCOL, kind: 'child.handshake', challenge },
      { protocol: HANDSHAKE_PROTOCOL, kind: 'parent.handshake', challenge: 'short' },
      { protocol: HANDSHAKE_PROTOCOL, kind: 'parent.handshake', challenge: `${challenge}!` },
    ]) {
      const result = decodeParentHandshake(bad);
      expect(result.ok).toBe(false);
      expect(result.ok ? '' : result.code).toBe('invalid_handshake');
    }
  });

  it('accepts exactly the child handshake', () => {
    expect(
      decodeChildHandshake({
        protocol: HANDSHAKE_PROTOCOL,
        kind: 'child.handshake',
        challenge,
        parent_origin: 'http://localhost:8080',
      }).ok,
    ).toBe(true);
    expect(decodeChildHandshake({ protocol: HANDSHAKE_PROTOCOL, kind: 'child.handshake', challenge }).ok).toBe(false);
  });
});

describe('child payloads', () => {
  const activation = { generation: 3, nonce: NONCE };
  const check = (kind: Parameters<typeof checkChildPayload>[0], payload: Record<string, unknown>) => {
    const r = checkChildPayload(kind, payload);
    return r.ok ? 'ok' : r.code;
  };

  it('accepts each kind in its exact shape', () => {
    expect(check('ready', activation)).toBe('ok');
    expect(check('page.advance', activation)).toBe('ok');
    expect(check('kv.list', activation)).toBe('ok');
    expect(check('kv.get', { ...activation, key: 'counter' })).toBe('ok');
    expect(
      check('kv.set', {
        ...activation,
        key: 'counter',
        value_base64: 'MQ==',
        content_type: 'text/plain',
        idempotency_key: randomToken(22),
      }),
    ).toBe('ok');
    expect(
      check('kv.set', {
        ...activation,
        key: 'c',
        value_base64: '',
        content_type: 'text/plain',
        idempotency_key: randomToken(22),
        expected_revision: 2,
      }),
    ).toBe('ok');
    expect(
      check('kv.delete', { ...activation, key: 'counter', expected_revision: 1, idempotency_key: randomToken(22) }),
    ).toBe('ok');
    expect(check('log', { ...activation, level: 'info', code: 'app', message: 'hello' })).toBe('ok');
    expect(check('event.emit', { ...activation, code: 'button.pressed' })).toBe('ok');
  });

  it('refuses extra or missing members', () => {
    expect(check('ready', { ...activation, extra: 1 })).toBe('invalid_payload');
    expect(check('kv.get', activation)).toBe('invalid_payload');
  });

  it('checks generation and nonce', () => {
    expect(check('ready', { generation: -1, nonce: NONCE })).toBe('invalid_generation');
    expect(check('ready', { generation: 1.5, nonce: NONCE })).toBe('invalid_generation');
    expect(check('ready', { generation: 2 ** 53, nonce: NONCE })).toBe('invalid_generation');
    expect(check('ready', { generation: 1, nonce: 'short' })).toBe('invalid_nonce');
  });

  it('checks keys, values, revisions and idempotency keys', () => {
    const set = {
      ...activation,
      key: 'k',
      value_base64: 'MQ==',
      content_type: 'text/plain',
      idempotency_key: randomToken(22),
    };
    expect(check('kv.get', { ...activation, key: '' })).toBe('invalid_key');
    expect(check('kv.get', { ...activation, key: 'k'.repeat(257) })).toBe('invalid_key');
    expect(check('kv.get', { ...activation, key: 'é'.repeat(129) })).toBe('invalid_key'); // 258 bytes
    expect(check('kv.get', { ...activation, key: '_marquee/secret' })).toBe('invalid_key');
    expect(check('kv.set', { ...set, value_base64: 'not base64!' })).toBe('invalid_payload');
    expect(check('kv.set', { ...set, content_type: 'text/plain\r\nX: y' })).toBe('invalid_payload');
    expect(check('kv.set', { ...set, expected_revision: 0 })).toBe('invalid_revision');
    expect(check('kv.set', { ...set, idempotency_key: 'short' })).toBe('invalid_payload');
    expect(
      check('kv.delete', { ...activation, key: 'k', expected_revision: 'x', idempotency_key: randomToken(22) }),
    ).toBe('invalid_revision');
  });

  it('takes an optional kv.list cursor of 1 to KV_LIST_CURSOR_MAX characters', () => {
    expect(check('kv.list', { ...activation, cursor: 'a2V5LTAxOTk' })).toBe('ok');
    expect(check('kv.list', { ...activation, cursor: 'c'.repeat(KV_LIST_CURSOR_MAX) })).toBe('ok');
    expect(check('kv.list', { ...activation, cursor: 'c'.repeat(KV_LIST_CURSOR_MAX + 1) })).toBe('invalid_payload');
    expect(check('kv.list', { ...activation, cursor: '' })).toBe('invalid_payload');
    expect(check('kv.list', { ...activation, cursor: 42 })).toBe('invalid_payload');
    expect(check('kv.list', { ...activation, cursor: null })).toBe('invalid_payload');
    expect(check('kv.list', { ...activation, cursor: ['a'] })).toBe('invalid_payload');
    expect(check('kv.list', { ...activation, cursor: 'a', limit: 10 })).toBe('invalid_payload');
  });

  it('checks log and event members', () => {
    expect(check('log', { ...activation, level: 'fatal', code: 'app', message: 'x' })).toBe('invalid_log');
    expect(check('log', { ...activation, level: 'info', code: 'a b', message: 'x' })).toBe('invalid_log');
    expect(check('log', { ...activation, level: 'info', code: 'app', message: 'x'.repeat(2049) })).toBe('invalid_log');
    expect(check('event.emit', { ...activation, code: 'c'.repeat(65) })).toBe('invalid_event');
  });
});

describe('parent payloads', () => {
  const context = {
    application_id: 'app_0123456789',
    release_id: 'rel_0123456789',
    placement_id: 'board',
    generation: 1,
    nonce: NONCE,
    player_origin: 'http://localhost:8080',
    capabilities: { 'page.advance': true, 'kv.read': true, 'kv.write': false },
    viewport: { width: 1920, height: 1080 },
    placement: { width: 960, height: 540 },
  };
  const check = (kind: Parameters<typeof checkParentPayload>[0], payload: Record<string, unknown>) => {
    const r = checkParentPayload(kind, payload);
    return r.ok ? 'ok' : r.code;
  };

  it('accepts a context and refuses each malformed member', () => {
    expect(check('context', context)).toBe('ok');
    expect(check('context', { ...context, screen_id: 'scr_0123456789' })).toBe('ok');
    expect(check('context', { ...context, extra: 1 })).toBe('invalid_context');
    expect(check('context', { ...context, application_id: 'x' })).toBe('invalid_application');
    expect(check('context', { ...context, release_id: 'rel/../../x' })).toBe('invalid_release');
    expect(check('context', { ...context, placement_id: '' })).toBe('invalid_placement');
    expect(check('context', { ...context, player_origin: 5 })).toBe('invalid_player_origin');
    expect(check('context', { ...context, capabilities: { 'page.advance': true } })).toBe('invalid_context');
    expect(check('context', { ...context, capabilities: { ...context.capabilities, admin: true } })).toBe(
      'invalid_context',
    );
    expect(check('context', { ...context, viewport: { width: 100_001, height: 1 } })).toBe('invalid_context');
  });

  it('accepts acks and problems and refuses malformed problems', () => {
    const base = { request_message_id: newMessageId(), generation: 1, nonce: NONCE };
    expect(check('response.ack', { ...base, result: { any: ['thing'] } })).toBe('ok');
    expect(
      check('response.problem', {
        ...base,
        problem: { code: 'revision_conflict', status: 412, detail: 'stale', request_id: 'req_1', current_revision: 3 },
      }),
    ).toBe('ok');
    expect(
      check('response.problem', { ...base, problem: { code: 'Bad Code', status: 412, detail: 'x', request_id: 'r' } }),
    ).toBe('invalid_response');
    expect(
      check('response.problem', {
        ...base,
        problem: { code: 'x', status: 412, detail: 'x', request_id: 'r', secret: 1 },
      }),
    ).toBe('invalid_response');
    expect(check('response.ack', { ...base, request_message_id: 'x' })).toBe('invalid_response');
  });
});

describe('ids', () => {
  it('makes msg_ + 32 hex message ids and base64url tokens', () => {
    expect(newMessageId()).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(randomToken(22)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new Set(Array.from({ length: 100 }, () => randomToken(22))).size).toBe(100);
  });

  it('lists each SDK error code once', () => {
    expect(new Set(BRIDGE_ERROR_CODES).size).toBe(BRIDGE_ERROR_CODES.length);
  });
});

describe('the player origin a release host names', () => {
  it('is exactly one http(s) origin', () => {
    expect(playerOriginOf({ player_origin: 'http://localhost:8080' })).toBe('http://localhost:8080');
    expect(playerOriginOf({ player_origin: 'https://play.example.com' })).toBe('https://play.example.com');
    expect(playerOriginOf({ player_origin: 'https://play.example.com', later: 'fields are ignored' })).toBe(
      'https://play.example.com',
    );
  });

  it('is nothing for any other answer', () => {
    for (const answer of [
      null,
      'https://play.example.com',
      ['https://play.example.com'],
      {},
      { player_origin: 42 },
      { player_origin: '' },
      { player_origin: 'https://play.example.com/' },
      { player_origin: 'https://play.example.com/player' },
      { player_origin: 'https://play.example.com?x=1' },
      { player_origin: 'https://user:pw@play.example.com' },
      { player_origin: 'https://PLAY.example.com' },
      { player_origin: 'https://play.example.com:443' },
      { player_origin: 'javascript:alert(1)' },
      { player_origin: 'file:///etc' },
      { player_origin: 'null' },
      { player_origin: '*' },
    ]) {
      expect(playerOriginOf(answer), JSON.stringify(answer)).toBeNull();
    }
  });
});

describe('handshake routing', () => {
  it('routes only real handshake objects or JSON, not text that merely mentions the protocol', async () => {
    const { isHandshakeLike } = await import('./protocol');
    expect(isHandshakeLike({ protocol: HANDSHAKE_PROTOCOL, kind: 'parent.handshake', challenge: 'x' })).toBe(true);
    expect(isHandshakeLike(JSON.stringify({ protocol: HANDSHAKE_PROTOCOL }))).toBe(true);
    expect(
      isHandshakeLike(JSON.stringify(envelope({}, { generation: 1, nonce: NONCE, note: HANDSHAKE_PROTOCOL }))),
    ).toBe(false);
    expect(isHandshakeLike(`not json ${HANDSHAKE_PROTOCOL}`)).toBe(false);
    expect(isHandshakeLike(envelope())).toBe(false);
  });
});
