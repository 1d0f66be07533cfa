// The upload's header rules (spec: Applications and operations, "Upload header rules"). Pure:
// every violation is a synchronous invalid_request that names the header.
import { CONTROL_CHARACTER, LIMITS } from '../../sdk/contract/limits';
import {
  APPLICATION_NAME_MAX,
  ARCHIVE_CONTENT_TYPE,
  ARCHIVE_SHA256_PATTERN,
  SDK_VERSION_MAX,
  UPLOAD_HEADERS,
} from '../../sdk/contract/applications';
import { echo } from '../../sdk/contract/untrusted-text';
import { invalidField } from '../problem';

/** What the uploader says the archive holds; the scan checks every figure against the bytes. */
export interface ArchiveDeclaration {
  sha256: string;
  expandedBytes: number;
  fileCount: number;
}

export interface UploadHeaders {
  declaration: ArchiveDeclaration;
  sdkVersion: string | null;
  /** The decoded name and the header it came in, when one was sent. */
  name?: { value: string; header: string };
}

/** Headers as Node gives them in `req.headersDistinct`: lower-case names, every value kept. */
export type DistinctHeaders = Record<string, string[] | undefined>;

/** The request headers that belong to an upload's identity (idempotency fingerprint). */
export const UPLOAD_FINGERPRINT_HEADERS = [
  'content-type',
  ...Object.values(UPLOAD_HEADERS).map((h) => h.toLowerCase()),
];

export function parseUploadHeaders(headers: DistinctHeaders): UploadHeaders {
  const sha256 = required(headers, UPLOAD_HEADERS.archiveSha256);
  if (!ARCHIVE_SHA256_PATTERN.test(sha256)) {
    throw invalidField(
      UPLOAD_HEADERS.archiveSha256,
      'must be the SHA-256 of the gzip bytes as 64 lowercase hexadecimal characters',
    );
  }
  const expandedBytes = integer(headers, UPLOAD_HEADERS.expandedBytes, 1, LIMITS.application_expanded_bytes);
  const fileCount = integer(headers, UPLOAD_HEADERS.fileCount, 1, LIMITS.application_file_count);

  let sdkVersion: string | null = null;
  const sdk = single(headers, UPLOAD_HEADERS.sdkVersion);
  if (sdk !== undefined) {
    if (sdk.length === 0 || sdk.length > SDK_VERSION_MAX || !/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(sdk)) {
      throw invalidField(UPLOAD_HEADERS.sdkVersion, `must be 1 to ${SDK_VERSION_MAX} printable ASCII characters`);
    }
    sdkVersion = sdk;
  }

  const plain = single(headers, UPLOAD_HEADERS.applicationName);
  const extended = single(headers, UPLOAD_HEADERS.applicationNameExtended);
  if (plain !== undefined && extended !== undefined) {
    throw invalidField(
      UPLOAD_HEADERS.applicationName,
      `send either ${UPLOAD_HEADERS.applicationName} or ${UPLOAD_HEADERS.applicationNameExtended}, not both`,
      'conflict',
    );
  }
  const result: UploadHeaders = { declaration: { sha256, expandedBytes, fileCount }, sdkVersion };
  if (plain !== undefined) result.name = { value: asciiName(plain), header: UPLOAD_HEADERS.applicationName };
  if (extended !== undefined)
    result.name = { value: extendedName(extended), header: UPLOAD_HEADERS.applicationNameExtended };
  return result;
}

/** Content-Type must be application/gzip; a declared Content-Length over the archive limit is refused before reading. */
export function checkArchiveBody(headers: DistinctHeaders): void {
  const type = single(headers, 'Content-Type');
  if (type === undefined || type.split(';')[0]!.trim().toLowerCase() !== ARCHIVE_CONTENT_TYPE) {
    throw invalidField('Content-Type', `send the archive raw as ${ARCHIVE_CONTENT_TYPE}`, 'unsupported');
  }
  const length = single(headers, 'Content-Length');
  if (length !== undefined && /^[0-9]+$/.test(length) && Number(length) > LIMITS.application_compressed_bytes) {
    throw invalidField(
      'Content-Length',
      `the archive may be at most ${LIMITS.application_compressed_bytes} bytes`,
      'too_large',
    );
  }
}

function single(headers: DistinctHeaders, name: string): string | undefined {
  const values = headers[name.toLowerCase()];
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > 1) throw invalidField(name, 'is repeated; send it once', 'repeated');
  return values[0]!;
}

function required(headers: DistinctHeaders, name: string): string {
  const value = single(headers, name);
  if (value === undefined) throw invalidField(name, 'is required', 'required');
  return value;
}

function integer(headers: DistinctHeaders, name: string, min: number, max: number): number {
  const value = required(headers, name);
  const n = /^[0-9]{1,16}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw invalidField(name, `must be an integer from ${min} to ${max}`);
  return n;
}

function asciiName(raw: string): string {
  const name = raw.trim();
  // Node hands header bytes over as Latin-1, so anything above 0x7e was not ASCII on the wire.
  if (/[^\x00-\x7e]/.test(name)) {
    throw invalidField(
      UPLOAD_HEADERS.applicationName,
      `must be ASCII; send other names as ${UPLOAD_HEADERS.applicationNameExtended} (RFC 8187)`,
    );
  }
  return checkedName(name, UPLOAD_HEADERS.applicationName);
}

/** RFC 8187 ext-value with the UTF-8 charset and no language: `UTF-8''%E2%82%AC%20menu`. */
function extendedName(raw: string): string {
  const header = UPLOAD_HEADERS.applicationNameExtended;
  const match = /^utf-8''(.*)$/is.exec(raw.trim());
  if (!match) throw invalidField(header, `must be UTF-8'' followed by the percent-encoded UTF-8 name (RFC 8187)`);
  const encoded = match[1]!;
  if (!/^(?:[A-Za-z0-9!#$&+\-.^_`|~]|%[0-9A-Fa-f]{2})*$/.test(encoded)) {
    throw invalidField(header, 'has an invalid percent-encoding; every byte other than RFC 8187 attr-char must be %XX');
  }
  const bytes = new Uint8Array(encoded.length);
  let n = 0;
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === '%') {
      bytes[n++] = parseInt(encoded.slice(i + 1, i + 3), 16);
      i += 2;
    } else {
      bytes[n++] = encoded.charCodeAt(i);
    }
  }
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, n));
  } catch {
    throw invalidField(header, 'does not decode as UTF-8');
  }
  return checkedName(decoded.trim(), header);
}

function checkedName(name: string, header: string): string {
  const control = CONTROL_CHARACTER.exec(name);
  if (control) throw invalidField(header, `must not contain control characters (found ${echo(control[0])})`);
  if (name.length === 0) throw invalidField(header, 'must not be empty');
  if ([...name].length > APPLICATION_NAME_MAX)
    throw invalidField(header, `must be at most ${APPLICATION_NAME_MAX} characters`, 'too_long');
  return name;
}
