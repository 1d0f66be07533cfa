import { describe, expect, it } from 'vitest';
import { Keys } from '../keys';
import { EventCursors, type StreamScope } from './cursors';

const cursors = new EventCursors(new Keys(Buffer.alloc(32, 7)));
const tenant: StreamScope = { kind: 'tenant', tenantId: 'prj_a' };
const otherTenant: StreamScope = { kind: 'tenant', tenantId: 'prj_b' };
const screen: StreamScope = { kind: 'screen', tenantId: 'prj_a', screenId: 'scr_1' };
const otherScreen: StreamScope = { kind: 'screen', tenantId: 'prj_a', screenId: 'scr_2' };

describe('event cursors', () => {
  it('round-trip a position within their scope', () => {
    for (const position of [0, 1, 42, 9_007_199_254_740_991]) {
      expect(cursors.decode(tenant, cursors.encode(tenant, position))).toBe(position);
      expect(cursors.decode(screen, cursors.encode(screen, position))).toBe(position);
    }
  });

  it('are invalid when the position is altered', () => {
    const cursor = cursors.encode(tenant, 41);
    expect(cursors.decode(tenant, cursor.replace(/^41\./, '42.'))).toBeUndefined();
  });

  it('are invalid when the signature is altered', () => {
    const cursor = cursors.encode(tenant, 41);
    const last = cursor.at(-1) === 'A' ? 'B' : 'A';
    expect(cursors.decode(tenant, cursor.slice(0, -1) + last)).toBeUndefined();
  });

  it('are invalid in another tenant', () => {
    expect(cursors.decode(otherTenant, cursors.encode(tenant, 5))).toBeUndefined();
  });

  it('of a tenant stream are invalid on a screen stream, and the reverse', () => {
    expect(cursors.decode(screen, cursors.encode(tenant, 5))).toBeUndefined();
    expect(cursors.decode(tenant, cursors.encode(screen, 5))).toBeUndefined();
    expect(cursors.decode(otherScreen, cursors.encode(screen, 5))).toBeUndefined();
  });

  it('signed with another server secret are invalid', () => {
    const foreign = new EventCursors(new Keys(Buffer.alloc(32, 8)));
    expect(cursors.decode(tenant, foreign.encode(tenant, 5))).toBeUndefined();
  });

  it('refuse malformed text without throwing', () => {
    const good = cursors.encode(tenant, 5);
    for (const text of [
      '',
      'garbage',
      '5',
      `${good}x`,
      ` ${good}`,
      `05.${good.split('.')[1]}`,
      `99999999999999999.${good.split('.')[1]}`,
      '-1.AAAAAAAAAAAAAAAAAAAAAA',
    ]) {
      expect(cursors.decode(tenant, text)).toBeUndefined();
    }
  });

  it('do not carry the tenant id in clear', () => {
    expect(cursors.encode(tenant, 5)).not.toContain('prj_a');
  });
});
