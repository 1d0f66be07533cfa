// Structured logs (pino). Request lines carry method, path without query, status, timing and ids:
// never headers, cookies, query strings or bodies, which is where tokens, tickets and signatures live,
// and never a credential that sits in the path itself (redactPath).
import pino, { type DestinationStream, type Logger } from 'pino';
import { escapeUnsafeInJson } from '../sdk/contract/untrusted-text';

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

/**
 * Paths that carry a credential in a segment: the segment is replaced before a path is logged or
 * put in a problem's `instance`. A route that takes a credential in its path adds its pattern here
 * (group 1 is the part kept). The screen's public URL `/s/<public_id>` opens a runtime session.
 */
const CREDENTIAL_PATHS: readonly RegExp[] = [/^(\/+s\/+)[^/]+/i];

/** The path as it may be shown: credential segments replaced by `[redacted]`. */
export function redactPath(path: string): string {
  return CREDENTIAL_PATHS.reduce((shown, pattern) => shown.replace(pattern, '$1[redacted]'), path);
}

/**
 * Every line passes here on its way out: characters a request may carry that JSON leaves raw (DEL,
 * C1 controls, bidirectional overrides) become `\uXXXX` escapes, so no log viewer or terminal
 * receives them (sdk/contract/untrusted-text.ts is the one rule).
 */
function escapingUnsafeText(destination: DestinationStream): DestinationStream {
  return { write: (line: string) => destination.write(escapeUnsafeInJson(line)) };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, base: undefined, redact: { paths: REDACT, censor: '[redacted]' } },
    escapingUnsafeText(destination ?? pino.destination(1)),
  );
}
