// Request bodies and queries: bounded reading, strict JSON, and zod issues as invalid_request problems.
import type { Request } from 'express';
import type { z } from 'zod';
import { BodyStalled, BodyTooSlow, guardBodyProgress } from './body-progress';
import { echo } from '../../sdk/contract/untrusted-text';
import { problem, type FieldError } from '../problem';

export const DEFAULT_JSON_BODY_LIMIT = 64 * 1024;
/**
 * Deepest nesting of arrays and objects a JSON body may have. The deepest document the contract
 * defines (a v2 playlist) nests under ten levels; every later walker of the body (fingerprint,
 * schemas, JSON.stringify of stored context) may then recurse without running out of stack.
 */
export const MAX_JSON_DEPTH = 64;
const EMPTY = Buffer.alloc(0);

export interface BodyTimes {
  /** Without a byte this long, the body is stalled. */
  idleMs: number;
  /** The whole body, given what it declares (at most `limit`), must arrive within this. */
  deadlineMs: (bytes: number) => number;
}

/**
 * Reads the whole body, refusing (and stopping) once it passes `limit` bytes, once it sent
 * nothing for `idleMs`, or once its deadline passed (then the connection is closed).
 */
export async function readBody(req: Request, limit: number, times: BodyTimes): Promise<Buffer> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return EMPTY;
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  const body = guardBodyProgress(req, times.idleMs, {
    deadlineMs: times.deadlineMs(Number.isFinite(declared) ? declared : limit),
  });
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof BodyStalled) {
      throw problem('invalid_request', error.message, {
        headers: { Connection: 'close' },
        errors: [{ field: 'body', code: 'stalled', detail: error.message }],
      });
    }
    if (error instanceof BodyTooSlow) {
      throw problem('invalid_request', error.message, {
        headers: { Connection: 'close' },
        errors: [{ field: 'body', code: 'too_slow', detail: error.message }],
      });
    }
    throw error;
  } finally {
    body.release();
  }
  return Buffer.concat(chunks);
}

function tooLarge(limit: number) {
  return problem('invalid_request', `request body exceeds the ${limit}-byte limit of this route`, {
    errors: [{ field: 'body', code: 'too_large', detail: `at most ${limit} bytes` }],
  });
}

/** Parses a JSON body; an empty body is `undefined`. */
export function parseJson(req: Request, raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw problem('invalid_request', 'send the body as application/json', {
      errors: [{ field: 'content-type', code: 'unsupported', detail: 'expected application/json' }],
    });
  }
  if (exceedsDepth(raw, MAX_JSON_DEPTH)) {
    throw problem('invalid_request', `JSON body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`, {
      errors: [{ field: 'body', code: 'too_deep', detail: `at most ${MAX_JSON_DEPTH} levels of nesting` }],
    });
  }
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw problem('invalid_request', 'the body is not valid UTF-8', {
      errors: [{ field: 'body', code: 'malformed_json', detail: 'body is not valid UTF-8' }],
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the body around the fault, and the body may hold a password: say only where.
    throw problem('invalid_request', `malformed JSON${whereMalformed((error as Error).message)}`, {
      errors: [{ field: 'body', code: 'malformed_json', detail: 'body is not valid JSON' }],
    });
  }
  // Only an escape (\ud800 to \udfff) can make one: text decoded from UTF-8 holds none.
  if (SURROGATE_ESCAPE.test(text) && holdsLoneSurrogate(value)) {
    throw problem(
      'invalid_request',
      'a string in the body holds a lone UTF-16 surrogate (an unpaired \\ud800 to \\udfff)',
      {
        errors: [{ field: 'body', code: 'invalid_unicode', detail: 'strings must be well-formed Unicode' }],
      },
    );
  }
  // Only the escape \u0000 can make one (JSON text holds no raw NUL). PostgreSQL's text cannot hold
  // U+0000, so a name or reason with one would fail there alone: refused on every store (D-471).
  if (NUL_ESCAPE.test(text) && holdsNul(value)) {
    throw problem('invalid_request', 'a string in the body holds a NUL character (\\u0000)', {
      errors: [{ field: 'body', code: 'invalid_unicode', detail: 'strings must not contain U+0000' }],
    });
  }
  return value;
}

const NUL_ESCAPE = /\\u0000/;

/** The path values that name a row (an id, a revision); a key or a file name is its handler's to judge. */
const PATH_ID = /^(id|\w+_id|manifest_revision)$/;

/**
 * A path id holding U+0000 names nothing, on every store alike: refused before any lookup, since
 * PostgreSQL cannot even compare text with one (D-471, D-482).
 */
export function refuseNulPathIds(params: Record<string, string>): void {
  for (const [name, value] of Object.entries(params)) {
    if (PATH_ID.test(name) && value.includes('\u0000'))
      throw problem('not_found', `${name} ${echo(value)} not found: no id holds U+0000`);
  }
}

function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).some(([key, v]) => key.includes('\u0000') || holdsNul(v));
  return false;
}

/** Strict UTF-8; a leading byte order mark is skipped (RFC 8259 lets a parser ignore it). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** In `u` mode a class of surrogates matches only unpaired ones: a pair is one code point. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).some(([key, v]) => LONE_SURROGATE.test(key) || holdsLoneSurrogate(v));
  return false;
}

/** Where JSON.parse stopped, from its message, without the excerpt of the body it quotes. */
function whereMalformed(message: string): string {
  if (/Unexpected end of JSON input/.test(message)) return ': the body ends early';
  const position = /at position (\d+)/.exec(message);
  return position ? ` at character ${position[1]}` : '';
}

/**
 * Bodies are taken as sent: a Content-Encoding other than identity (gzip, br) is refused rather
 * than read as if it were the body itself.
 */
export function refuseContentEncoding(req: Request): void {
  const coding = req.headers['content-encoding'];
  if (coding === undefined || coding.trim().toLowerCase() === 'identity') return;
  throw problem('invalid_request', 'send the body without a Content-Encoding: this server does not decode one', {
    errors: [{ field: 'Content-Encoding', code: 'unsupported', detail: 'send the body uncompressed' }],
  });
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True once `[` and `{` outside strings nest deeper than `max`. One pass over the bytes: UTF-8
 * multi-byte sequences never contain ASCII bytes, so quotes and brackets are found byte by byte.
 */
export function exceedsDepth(raw: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > max) return true;
    } else if (byte === 0x5d || byte === 0x7d) depth--;
  }
  return false;
}

/** Validates with the schema; every issue becomes a field error, unknown keys named. */
export function validate<T>(schema: z.ZodType<T>, value: unknown, where: 'body' | 'query'): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = fieldErrors(result.error, where, value);
  const first = errors[0]!;
  throw problem('invalid_request', `${first.field}: ${first.detail}`, { errors });
}

export function fieldErrors(error: z.ZodError, where: 'body' | 'query', input: unknown): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        errors.push({
          field: join(where, [...base, echo(key)]),
          code: 'unknown_field',
          detail: `unknown field "${echo(key)}"`,
        });
      }
    } else {
      // Zod's issues do not carry the input: a field is missing when nothing is at its path.
      const code = issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined ? 'required' : issue.code;
      // A query's number that is not one (`?limit=abc`) reaches zod as NaN: say what was expected.
      const notANumber = issue.code === 'invalid_type' && (issue as { received?: unknown }).received === 'NaN';
      const detail = code === 'required' ? 'is required' : notANumber ? 'must be a number' : issue.message;
      errors.push({ field: join(where, base), code, detail });
    }
  }
  return errors;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function join(where: string, path: string[]): string {
  return path.length === 0 ? where : path.join('.');
}

/** First value of each query parameter; a repeated parameter is refused rather than guessed. */
export function queryObject(url: URL): Record<string, string> {
  // No prototype: `constructor` or `__proto__` is a parameter like any other (and unknown to every schema).
  const out: Record<string, string> = Object.create(null);
  for (const [key, value] of url.searchParams) {
    if (Object.hasOwn(out, key))
      throw problem('invalid_request', `query parameter ${echo(key)} is repeated`, {
        errors: [{ field: echo(key), code: 'repeated', detail: 'send it once' }],
      });
    out[key] = value;
  }
  return out;
}
