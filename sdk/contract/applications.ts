// Applications: the upload headers, the accepted-upload answer and the Application resource.
// An application is uploaded as one tar.gz sent raw (Content-Type application/gzip) with its
// metadata in headers; the server answers 202 with an OperationAccepted and publishes an
// immutable release once the operation succeeds.

/** Media type of an application archive body (sent raw: never base64, never JSON). */
export const ARCHIVE_CONTENT_TYPE = 'application/gzip';

/** Upload header names (the spec's `Svc-` prefix is `Marquee-`). */
export const UPLOAD_HEADERS = {
  /** Required: lowercase hex SHA-256 of the gzip bytes exactly as sent. */
  archiveSha256: 'Marquee-Archive-SHA256',
  /** Required: sum of the regular files' sizes once expanded, 1 to 262144000. */
  expandedBytes: 'Marquee-Expanded-Bytes',
  /** Required: number of regular files in the archive, 1 to 5000. */
  fileCount: 'Marquee-File-Count',
  /** Optional: SDK version the archive was packed with, at most 64 characters. */
  sdkVersion: 'Marquee-SDK-Version',
  /** Optional, new applications only: ASCII name, trimmed, at most 120 characters. */
  applicationName: 'Marquee-Application-Name',
  /** Optional, new applications only: RFC 8187 form (`UTF-8''` + percent-encoded UTF-8) for non-ASCII names. */
  applicationNameExtended: 'Marquee-Application-Name*',
} as const;

export const APPLICATION_NAME_MAX = 120; // spec: decoded length at most 120 Unicode scalar values
export const SDK_VERSION_MAX = 64; // spec: Svc-SDK-Version at most 64 characters
export const ARCHIVE_SHA256_PATTERN = /^[0-9a-f]{64}$/;
/** The document a release must have at its root. */
export const RELEASE_ENTRY = 'index.html';

/** 202 answer of `POST /api/v1/applications` and `POST /api/v1/applications/{id}/releases`. */
export interface OperationAccepted {
  /** The application the upload belongs to (new, or the one named in the path). */
  id: string;
  /** The release this upload creates (`rel_…`); pin it in a playlist once the operation succeeded. */
  release_id: string;
  /** Poll `GET /api/v1/operations/{operation_id}`; kind `application.upload`. */
  operation_id: string;
}

/** Result of a succeeded `application.upload` operation. */
export interface ApplicationUploadResult {
  application_id: string;
  release_id: string;
}

/**
 * `ready`: it has a ready release; `pending`: its first release is still being received or
 * published; `failed`: it has no ready release and its newest upload failed or was cancelled.
 */
export type ApplicationState = 'ready' | 'pending' | 'failed';

export interface Application {
  id: string;
  name: string;
  revision: number;
  state: ApplicationState;
  /** Newest ready release; absent until a first publication. */
  latest_ready_release?: string;
  /** Same as latest_ready_release (Model A's name for it). */
  release_id?: string;
  created_at: string;
  updated_at: string;
}

export interface ApplicationList {
  items: Application[];
}

/**
 * The name headers to send for `name`: the plain header when it is printable ASCII, else the
 * RFC 8187 form. Never both (the server refuses that).
 */
export function applicationNameHeader(name: string): Record<string, string> {
  if (/^[\x20-\x7e]*$/.test(name)) return { [UPLOAD_HEADERS.applicationName]: name };
  const encoded = Array.from(new TextEncoder().encode(name), (byte) =>
    /[A-Za-z0-9!#$&+\-.^_`|~]/.test(String.fromCharCode(byte))
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');
  return { [UPLOAD_HEADERS.applicationNameExtended]: `UTF-8''${encoded}` };
}
