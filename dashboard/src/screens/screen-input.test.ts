// What a person types on a screen's page and the Screens page, as the API takes it.
import { describe, expect, it } from 'vitest';
import { codeFromLink, isPairingCode, normalizePairingCode, withoutPairingParam } from './pairing-code';
import { parseTags } from './tags';

describe('pairing codes', () => {
  it('takes the code as the glass shows it, in any case, with its dash or spaces', () => {
    expect(normalizePairingCode('abc-234')).toBe('ABC234');
    expect(normalizePairingCode(' ABC 234 ')).toBe('ABC234');
    expect(isPairingCode('ABC234')).toBe(true);
  });

  it('refuses what no player shows (letters it never uses, wrong length)', () => {
    expect(isPairingCode('ABC23')).toBe(false);
    expect(isPairingCode(normalizePairingCode('ABI-234'))).toBe(false); // no I: it reads as 1
  });
});

describe('a pairing code from a scanned QR code', () => {
  it('fills in the code the link carries, in its display form, and nothing that is not a code', () => {
    expect(codeFromLink('?pair=ABC234')).toBe('ABC-234');
    expect(codeFromLink('?x=1&pair=abc-234')).toBe('ABC-234');
    expect(codeFromLink('?pair=ABI234')).toBe('');
    expect(codeFromLink('?pair=<script>')).toBe('');
    expect(codeFromLink('')).toBe('');
  });

  it('takes the code out of the address and keeps the rest', () => {
    expect(withoutPairingParam('?pair=ABC234')).toBe('');
    expect(withoutPairingParam('?x=1&pair=ABC234')).toBe('?x=1');
  });
});

describe('tags', () => {
  it('splits on spaces and commas, once each', () => {
    expect(parseTags('lobby, floor2 lobby')).toEqual({ tags: ['lobby', 'floor2'], problem: null });
    expect(parseTags('  ')).toEqual({ tags: [], problem: null });
  });

  it('names a tag that is not letters or digits, and too many tags', () => {
    expect(parseTags('lobby floor-2').problem).toContain('“floor-2” is not a tag');
    expect(parseTags(Array.from({ length: 17 }, (_, i) => `t${i}`).join(' ')).problem).toContain('at most 16');
  });
});
