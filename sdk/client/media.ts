// Media: list, read, tag, delete, export the bytes (one byte range), generate, and the upload
// helper: declaration → the signed PUT exactly as issued → commit → wait → the ready Media.
import type {
  Media,
  MediaCommit,
  MediaContentType,
  MediaGeneration,
  MediaGenerationRequest,
  MediaList,
  MediaListQuery,
  MediaTagPatch,
  MediaUploadDeclaration,
  MediaUploadSession,
} from '../contract/media';
import type { Operation } from '../contract/operations';
import { MarqueeProblem } from './problem';
import type { operationRoutes, WaitOptions } from './operations';
import type { CallOptions, ClientTransport, GuardedCallOptions, MarqueeResult, ResultMeta } from './transport';
import { sha256Hex, type UploadProgress } from './upload-body';

/** What to upload: bytes, a Blob (a browser File), or a stream opener with its size and digest. */
export type MediaSource = Uint8Array | Blob | StreamedMedia;

export interface StreamedMedia {
  /** Opens the bytes from the start (called again if the PUT has to be retried). */
  stream: () => ReadableStream<Uint8Array>;
  bytes: number;
  sha256: string;
  /** Used when the options name none. */
  filename?: string;
}

export interface MediaUploadOptions {
  /** Defaults to the File's or the StreamedMedia's name. */
  filename?: string;
  /** Defaults to the Blob's type, else the filename's extension. */
  contentType?: MediaContentType;
  /** Model P: the original file name, kept verbatim; the stored filename derives from it. */
  sourceFilename?: string;
  /** Model P. */
  tag?: string;
  /** Skip hashing when you know the digest already. */
  sha256?: string;
  onProgress?: (progress: UploadProgress) => void;
  wait?: WaitOptions;
  signal?: AbortSignal;
}

/** The ready media, with the upload's operation and id. */
export type UploadedMedia = MarqueeResult<Media> & { operation: Operation; uploadId: string };

/** One byte range: `{start, end?}` (inclusive; no end = to the last byte) or the last `suffix` bytes. */
export type ByteRange = { start: number; end?: number } | { suffix: number };

/** A parsed `Content-Range: bytes start-end/size`. */
export interface ContentRange {
  start: number;
  end: number;
  /** The whole object's size. */
  size: number;
}

export interface ContentOptions {
  range?: ByteRange;
  /** An ETag (`"<sha256>"`) you hold: an unchanged object answers 304 with no body. */
  ifNoneMatch?: string;
  signal?: AbortSignal;
}

/** A media export: the body as a stream, and what the headers said. */
export interface MediaContent extends ResultMeta {
  /** Null for HEAD and 304. Read it or cancel it. */
  body: ReadableStream<Uint8Array> | null;
  notModified: boolean;
  /** On 206: the range served. */
  range: ContentRange | undefined;
  /** The whole object's size (from Content-Range, or Content-Length of a full answer). */
  size: number | undefined;
  contentLength: number | undefined;
  contentType: string | undefined;
  /** The strong ETag, `"<sha256>"`. */
  etag: string | undefined;
  /** From Content-Disposition: the media id plus its canonical extension. */
  filename: string | undefined;
}

const EXTENSION_TYPES: Record<string, MediaContentType> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
};
const CONTENT_TYPES = new Set<string>(Object.values(EXTENSION_TYPES));

/** The upload content type of a file name (by extension), or undefined. */
export function mediaContentTypeOf(filename: string): MediaContentType | undefined {
  return EXTENSION_TYPES[/\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase() ?? ''];
}

/** The Range header value of a byte range. */
export function rangeHeader(range: ByteRange): string {
  const check = (n: number, what: string) => {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative integer`);
  };
  if ('suffix' in range) {
    check(range.suffix, 'suffix');
    return `bytes=-${range.suffix}`;
  }
  check(range.start, 'start');
  if (range.end === undefined) return `bytes=${range.start}-`;
  check(range.end, 'end');
  if (range.end < range.start) throw new RangeError('end must not be before start');
  return `bytes=${range.start}-${range.end}`;
}

/** Parses `bytes start-end/size`; undefined for anything else (an unsatisfied range included). */
export function parseContentRange(value: string | null): ContentRange | undefined {
  const match = value ? /^bytes (\d+)-(\d+)\/(\d+)$/.exec(value.trim()) : null;
  return match ? { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) } : undefined;
}

function numberHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  return value !== null && /^\d+$/.test(value) ? Number(value) : undefined;
}

function isStreamed(source: MediaSource): source is StreamedMedia {
  return (
    typeof (source as StreamedMedia).stream === 'function' && !(typeof Blob !== 'undefined' && source instanceof Blob)
  );
}

export function mediaRoutes(t: ClientTransport, operations: ReturnType<typeof operationRoutes>) {
  const path = (id: string) => `/api/v1/media/${encodeURIComponent(id)}`;
  const get = (id: string) => t.request<Media>({ method: 'GET', path: path(id) });

  const declare = (declaration: MediaUploadDeclaration, options: CallOptions = {}) =>
    t.request<MediaUploadSession>({
      method: 'POST',
      path: '/api/v1/media/uploads',
      json: declaration,
      idempotent: true,
      ...options,
    });

  const commit = (uploadId: string, body: MediaCommit, options: CallOptions = {}) =>
    t.request<Operation>({
      method: 'POST',
      path: `/api/v1/media/uploads/${encodeURIComponent(uploadId)}/commit`,
      json: body,
      idempotent: true,
      ...options,
    });

  async function exportContent(method: 'GET' | 'HEAD', id: string, options: ContentOptions): Promise<MediaContent> {
    const headers: Record<string, string> = { Accept: '*/*' };
    if (options.range) headers.Range = rangeHeader(options.range);
    if (options.ifNoneMatch) headers['If-None-Match'] = options.ifNoneMatch;
    const { response, meta } = await t.send({ method, path: `${path(id)}/content`, headers, signal: options.signal });
    const range = response.status === 206 ? parseContentRange(response.headers.get('content-range')) : undefined;
    const contentLength = numberHeader(response.headers, 'content-length');
    const disposition = /filename="([^"]*)"/.exec(response.headers.get('content-disposition') ?? '');
    return {
      ...meta,
      body: method === 'HEAD' || response.status === 304 ? null : response.body,
      notModified: response.status === 304,
      range,
      size: range ? range.size : response.status === 200 ? contentLength : undefined,
      contentLength,
      contentType: response.headers.get('content-type') ?? undefined,
      etag: response.headers.get('etag') ?? undefined,
      filename: disposition?.[1],
    };
  }

  /** Declare → signed PUT → commit → wait; answers the ready Media. */
  async function upload(source: MediaSource, options: MediaUploadOptions = {}): Promise<UploadedMedia> {
    const streamed = isStreamed(source);
    const filename =
      options.filename ??
      (streamed ? source.filename : typeof File !== 'undefined' && source instanceof File ? source.name : undefined);
    if (!filename) throw new TypeError('name the upload: pass options.filename');
    const blobType =
      !streamed && !(source instanceof Uint8Array) && CONTENT_TYPES.has(source.type)
        ? (source.type as MediaContentType)
        : undefined;
    const contentType = options.contentType ?? blobType ?? mediaContentTypeOf(filename);
    if (!contentType) throw new TypeError(`cannot tell the content type of ${filename}: pass options.contentType`);
    const bytes = streamed ? source.bytes : source instanceof Uint8Array ? source.byteLength : source.size;
    const sha256 = options.sha256 ?? (streamed ? source.sha256 : await sha256Hex(source));

    const declaration: MediaUploadDeclaration = { filename, content_type: contentType, bytes, sha256 };
    if (options.sourceFilename !== undefined) declaration.source_filename = options.sourceFilename;
    if (options.tag !== undefined) declaration.tag = options.tag;
    const session = (await declare(declaration, { signal: options.signal })).data;

    let lostAnswer = false;
    try {
      await t.sendSigned({
        url: session.upload_url,
        method: session.method,
        headers: session.headers,
        body: streamed ? source.stream : source,
        signal: options.signal,
        onUploadProgress: options.onProgress,
        onNetworkError: () => (lostAnswer = true),
      });
    } catch (error) {
      // After a lost answer, "already used" may mean the bytes did arrive: the commit will tell.
      const maybeStored = lostAnswer && error instanceof MarqueeProblem && error.status === 403;
      if (!maybeStored) {
        // Give the reserved bytes back now rather than when the upload expires.
        await operations.cancel(session.operation.id).catch(() => undefined);
        throw error;
      }
    }

    const committed = await commit(
      session.id,
      { content_type: contentType, bytes, sha256 },
      { signal: options.signal },
    );
    const wait = options.wait ?? {};
    const operation = await operations.waitForSuccess(committed.data.id, {
      ...wait,
      signal: wait.signal ?? options.signal,
      onPoll: (polled) => {
        options.onProgress?.({ stage: 'processing', sent: bytes, total: bytes, operation: polled });
        wait.onPoll?.(polled);
      },
    });
    const mediaId = operation.result?.media_id;
    if (typeof mediaId !== 'string') throw new TypeError(`operation ${operation.id} succeeded without a media_id`);
    return { ...(await get(mediaId)), operation, uploadId: session.id };
  }

  return {
    /** Newest first; pass `next_cursor` back as `cursor` for the next page. */
    list: (query: MediaListQuery = {}) =>
      t.request<MediaList>({ method: 'GET', path: '/api/v1/media', query: { ...query } }),
    get,
    /** Replaces the tag (null clears it); playlists that select by tag re-resolve. Model P. */
    update: (id: string, patch: MediaTagPatch, options: GuardedCallOptions = {}) =>
      t.request<Media>({ method: 'PATCH', path: path(id), json: patch, idempotent: true, ...options }),
    /** Tombstones the media; 409 resource_conflict while a playlist a screen shows uses it. */
    delete: (id: string, options: GuardedCallOptions = {}) =>
      t.request<void>({ method: 'DELETE', path: path(id), idempotent: true, ...options }),
    /** The original bytes as a stream, or one range of them (206 with the parsed Content-Range). Model P. */
    content: (id: string, options: ContentOptions = {}) => exportContent('GET', id, options),
    /** Like content, read to the end. */
    async contentBytes(id: string, options: ContentOptions = {}): Promise<MediaContent & { data: Uint8Array }> {
      const content = await exportContent('GET', id, options);
      const data = content.body ? new Uint8Array(await new Response(content.body).arrayBuffer()) : new Uint8Array(0);
      return { ...content, body: null, data };
    },
    /** HEAD of the export: size, type and ETag without the bytes. */
    contentInfo: (id: string, options: ContentOptions = {}) => exportContent('HEAD', id, options),
    /** Generates an image through the configured vendor; answers the ready media and its cost. Model P. */
    generate: (request: MediaGenerationRequest, options: CallOptions = {}) =>
      t.request<MediaGeneration>({
        method: 'POST',
        path: '/api/v1/media/generations',
        json: request,
        idempotent: true,
        ...options,
      }),
    /** The steps of `upload`, for callers that drive them themselves. */
    declare,
    commit,
    upload,
  };
}
