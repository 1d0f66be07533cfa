// What the PostgreSQL notifier sends, without a database: payloads under NOTIFY's limit, in order.
import { describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES, packed, wakeSafeChannel } from './postgres-notifier';

describe('the PostgreSQL notifier payloads', () => {
  it('packs many messages into few payloads under the NOTIFY limit, in publish order', () => {
    const messages: [string, unknown][] = Array.from({ length: 1000 }, (_, i) => [`events:screen:scr_${i}`, i]);
    const payloads = packed('origin', messages);
    expect(payloads.length).toBeGreaterThan(1);
    expect(payloads.length).toBeLessThan(10);
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(MAX_PAYLOAD_BYTES);
    const unpacked = payloads.flatMap((p) => JSON.parse(p).m);
    expect(unpacked).toEqual(messages);
    expect(JSON.parse(payloads[0]!).o).toBe('origin');
  });

  it('drops a message too large for any payload instead of failing the others', () => {
    const payloads = packed('o', [
      ['big', 'x'.repeat(MAX_PAYLOAD_BYTES)],
      ['small', 1],
    ]);
    expect(payloads.flatMap((p) => JSON.parse(p).m)).toEqual([['small', 1]]);
  });

  it('wakes after a reconnect only the channels that mean "look again"', () => {
    expect(wakeSafeChannel('events:tenant:prj_1')).toBe(true);
    expect(wakeSafeChannel('operations:wake')).toBe(true);
    expect(wakeSafeChannel('streams-end:credential:crd_1')).toBe(false);
    expect(wakeSafeChannel('upload-cancelled:op_1')).toBe(false);
  });
});
