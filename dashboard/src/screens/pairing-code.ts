// What a person types from the glass (`abc-234`, `ABC 234`) as the code the API takes (`ABC234`).
import { displayPairingCode, PAIRING_CODE_PATTERN, PAIRING_HINT_PARAM } from '../../../sdk/contract/screens';

export function normalizePairingCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, '');
}

export function isPairingCode(code: string): boolean {
  return PAIRING_CODE_PATTERN.test(code);
}

/**
 * The code a scanned pairing QR code brought (`/screens?pair=ABC234`), in its dashed display form,
 * or '' when the link carries none or something that is not a code.
 */
export function codeFromLink(search: string): string {
  const code = normalizePairingCode(new URLSearchParams(search).get(PAIRING_HINT_PARAM) ?? '');
  return isPairingCode(code) ? displayPairingCode(code) : '';
}

/** The same location without the pairing parameter (the code is in the form now, not the address). */
export function withoutPairingParam(search: string): string {
  const params = new URLSearchParams(search);
  params.delete(PAIRING_HINT_PARAM);
  const rest = params.toString();
  return rest ? `?${rest}` : '';
}
