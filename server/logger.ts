// Structured logs (pino). Request lines carry method, path without query, status, timing and ids:
// never headers, cookies, query strings or bodies, which is where tokens, tickets and signatures live.
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

const REDACT = [
  'authorization',
  'cookie',
  'token',
  'ticket',
  'secret',
  'signature',
  '*.authorization',
  '*.cookie',
  '*.token',
  '*.ticket',
  '*.secret',
  '*.signature',
  'headers',
  '*.headers',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, base: undefined, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}
