// What a person types from the glass (`abc-234`, `ABC 234`) as the code the API takes (`ABC234`).
import { PAIRING_CODE_PATTERN } from '../../../sdk/contract/screens';

export function normalizePairingCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, '');
}

export function isPairingCode(code: string): boolean {
  return PAIRING_CODE_PATTERN.test(code);
}
