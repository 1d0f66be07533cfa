// Applications: list, read, delete, and the archive upload (a new application or a new release)
// with its headers, then a wait for the operation that publishes the release.
import {
  applicationNameHeader,
  ARCHIVE_CONTENT_TYPE,
  UPLOAD_HEADERS,
  type Application,
  type ApplicationList,
  type OperationAccepted,
} from '../contract/applications';
import type { Operation } from '../contract/operations';
import type { operationRoutes, WaitOptions } from './operations';
import type { CallOptions, ClientTransport, GuardedCallOptions, MarqueeResult, Revisioned } from './transport';
import { bodySize, sha256Hex, type UploadProgress } from './upload-body';

/** An archive whose upload headers are computed: what `packApplication` (sdk/pack) returns. */
export interface PackedArchive {
  archive: Uint8Array | Blob;
  headers: Record<string, string>;
}

/** Archive bytes packed some other way, with what they hold; the SHA-256 is computed when absent. */
export interface ArchiveFacts {
  archive: Uint8Array | Blob;
  /** Sum of the regular files' sizes once expanded. */
  expandedBytes: number;
  /** Number of regular files. */
  fileCount: number;
  name?: string;
  sha256?: string;
  sdkVersion?: string;
}

export type ArchiveUpload = PackedArchive | ArchiveFacts;

export interface UploadOptions extends CallOptions {
  /** Upload a new release of this application (project bearer) instead of a new application. */
  applicationId?: string;
  /** With applicationId: guard the application's revision. */
  ifMatch?: Revisioned;
  onProgress?: (progress: UploadProgress) => void;
}

export interface PublishOptions extends UploadOptions {
  /** How to wait for publication (poll interval, backoff, timeout). */
  wait?: WaitOptions;
}

/** A published upload: the application as it is now, plus the operation and the new release. */
export type PublishedApplication = MarqueeResult<Application> & {
  accepted: OperationAccepted;
  operation: Operation;
  releaseId: string;
};

const REQUIRED_HEADERS = [UPLOAD_HEADERS.archiveSha256, UPLOAD_HEADERS.expandedBytes, UPLOAD_HEADERS.fileCount];
const NAME_HEADERS = new Set([
  UPLOAD_HEADERS.applicationName.toLowerCase(),
  UPLOAD_HEADERS.applicationNameExtended.toLowerCase(),
]);

/** The headers to send with an archive: every `Marquee-*` header of a packed one, or computed from its facts. */
export async function archiveHeaders(upload: ArchiveUpload): Promise<Record<string, string>> {
  const headers: Record<string, string> = { 'Content-Type': ARCHIVE_CONTENT_TYPE };
  if ('headers' in upload) {
    for (const [name, value] of Object.entries(upload.headers)) if (/^marquee-/i.test(name)) headers[name] = value;
    const missing = REQUIRED_HEADERS.filter(
      (name) => !Object.keys(headers).some((h) => h.toLowerCase() === name.toLowerCase()),
    );
    if (missing.length > 0) throw new TypeError(`the packed archive's headers lack ${missing.join(', ')}`);
    return headers;
  }
  headers[UPLOAD_HEADERS.archiveSha256] = upload.sha256 ?? (await sha256Hex(upload.archive));
  headers[UPLOAD_HEADERS.expandedBytes] = String(upload.expandedBytes);
  headers[UPLOAD_HEADERS.fileCount] = String(upload.fileCount);
  if (upload.sdkVersion !== undefined) headers[UPLOAD_HEADERS.sdkVersion] = upload.sdkVersion;
  if (upload.name !== undefined) Object.assign(headers, applicationNameHeader(upload.name.trim()));
  return headers;
}

export function applicationRoutes(t: ClientTransport, operations: ReturnType<typeof operationRoutes>) {
  const path = (id: string) => `/api/v1/applications/${encodeURIComponent(id)}`;
  const get = (id: string) => t.request<Application>({ method: 'GET', path: path(id) });

  /** POST the archive raw with its headers; 202 with the operation that validates and publishes it. */
  async function upload(
    archive: ArchiveUpload,
    options: UploadOptions = {},
  ): Promise<MarqueeResult<OperationAccepted>> {
    const { applicationId, onProgress, ...call } = options;
    if (call.ifMatch !== undefined && applicationId === undefined)
      throw new TypeError('ifMatch guards a release upload: pass applicationId too');
    const headers = await archiveHeaders(archive);
    // A release keeps its application's name (the server refuses a rename), so name headers stay home.
    if (applicationId !== undefined)
      for (const name of Object.keys(headers)) if (NAME_HEADERS.has(name.toLowerCase())) delete headers[name];
    return t.request<OperationAccepted>({
      method: 'POST',
      path: applicationId === undefined ? '/api/v1/applications' : `${path(applicationId)}/releases`,
      headers,
      body: archive.archive,
      idempotent: true,
      onUploadProgress: onProgress,
      ...call,
    });
  }

  return {
    list: () => t.request<ApplicationList>({ method: 'GET', path: '/api/v1/applications' }),
    get,
    /** Tombstones the application and its releases; 409 application_in_use while a live manifest uses it. */
    delete: (id: string, options: GuardedCallOptions = {}) =>
      t.request<void>({ method: 'DELETE', path: path(id), idempotent: true, ...options }),
    upload,
    /**
     * Uploads, waits until the release is published (OperationFailedError names the archive rule
     * it broke), and answers the application as it is then.
     */
    async publish(archive: ArchiveUpload, options: PublishOptions = {}): Promise<PublishedApplication> {
      const { wait = {}, ...uploadOptions } = options;
      const total = bodySize(archive.archive);
      const accepted = await upload(archive, uploadOptions);
      const operation = await operations.waitForSuccess(accepted.data.operation_id, {
        ...wait,
        signal: wait.signal ?? options.signal,
        onPoll: (polled) => {
          options.onProgress?.({ stage: 'processing', sent: total ?? 0, total, operation: polled });
          wait.onPoll?.(polled);
        },
      });
      const application = await get(accepted.data.id);
      return { ...application, accepted: accepted.data, operation, releaseId: accepted.data.release_id };
    },
  };
}
