import { describe, expect, it } from 'vitest';
import { displayPairingCode } from '../../../sdk/contract/screens';
import { pairingHint } from './PairingScreen';

describe('pairing screen', () => {
  it('shows the code in its dashed display form', () => {
    expect(displayPairingCode('ABC234')).toBe('ABC-234');
  });

  it('puts the code, or the configured hint URL with the code, in the QR code', () => {
    expect(pairingHint('ABC234', undefined)).toBe('ABC234');
    expect(pairingHint('ABC234', 'https://dash.example.com/pair?code={code}')).toBe(
      'https://dash.example.com/pair?code=ABC234',
    );
  });
});
