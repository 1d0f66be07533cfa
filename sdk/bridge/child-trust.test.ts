import { describe, expect, it } from 'vitest';
import { ParentTrust } from './child-trust';
import { HANDSHAKE_PROTOCOL } from './protocol';

const PLAYER = 'http://localhost:8080';
const CHALLENGE = 'c'.repeat(32);

const handshake = (origin = PLAYER, challenge = CHALLENGE) =>
  ({ origin, data: { protocol: HANDSHAKE_PROTOCOL, kind: 'parent.handshake', challenge } }) as MessageEvent;

function trust(hasParent = true) {
  const diagnostics: string[] = [];
  return { trust: new ParentTrust(hasParent, (code) => diagnostics.push(code)), diagnostics };
}

describe('the parent a bridge child trusts', () => {
  it('without a parent window trusts nobody and asks no one', () => {
    const { trust: t } = trust(false);
    expect(t.asking).toBe(false);
    expect(t.refused).toBe(true);
  });

  it('holds the latest handshake until the release host answers, then pins its origin and challenge', () => {
    const { trust: t, diagnostics } = trust();
    expect(t.asking).toBe(true);
    expect(t.onHandshake(handshake(PLAYER, 'a'.repeat(32)))).toBeNull();
    expect(t.onHandshake(handshake())).toBeNull();
    const held = t.settle(PLAYER);
    expect(held?.data.challenge).toBe(CHALLENGE);
    expect(t.onHandshake(held!)).toEqual({
      protocol: HANDSHAKE_PROTOCOL,
      kind: 'child.handshake',
      challenge: CHALLENGE,
      parent_origin: PLAYER,
    });
    expect(t.pinned).toEqual({ origin: PLAYER, challenge: CHALLENGE });
    expect(diagnostics).toEqual([]);
  });

  it('answers repeats of the winning handshake, and no other challenge once pinned', () => {
    const { trust: t, diagnostics } = trust();
    t.settle(PLAYER);
    const first = t.onHandshake(handshake());
    expect(t.onHandshake(handshake())).toEqual(first);
    expect(t.onHandshake(handshake(PLAYER, 'b'.repeat(32)))).toBeNull();
    expect(t.pinned?.challenge).toBe(CHALLENGE);
    expect(diagnostics).toEqual(['invalid_handshake']);
  });

  it('refuses an origin the release host did not name, an opaque origin and a malformed handshake', () => {
    const { trust: t, diagnostics } = trust();
    t.settle(PLAYER);
    expect(t.onHandshake(handshake('https://elsewhere.example'))).toBeNull();
    expect(t.onHandshake(handshake('null'))).toBeNull();
    expect(t.onHandshake(handshake(PLAYER, 'short'))).toBeNull();
    expect(t.pinned).toBeNull();
    expect(diagnostics).toEqual(['untrusted_origin', 'wildcard_origin', 'invalid_handshake']);
  });

  it('refuses every handshake when the release host named no player', () => {
    const { trust: t, diagnostics } = trust();
    t.onHandshake(handshake());
    expect(t.settle(null)).not.toBeNull();
    expect(t.refused).toBe(true);
    expect(t.onHandshake(handshake())).toBeNull();
    expect(diagnostics).toEqual(['untrusted_origin']);
  });

  it('forgets a held handshake', () => {
    const { trust: t } = trust();
    t.onHandshake(handshake());
    t.forget();
    expect(t.settle(PLAYER)).toBeNull();
  });
});
