// The typed control-plane client. Each feature's routes live in their own small module over the
// shared transport; adding a feature is one module and one line below. Browser-safe: nothing
// here imports Node; file-path helpers live in `./node-files`.
import { agentRoutes } from './agents';
import { applicationRoutes } from './applications';
import { billingRoutes } from './billing';
import { commentRoutes } from './comments';
import { eventRoutes } from './events';
import { feedbackRoutes } from './feedback';
import { invitationRoutes } from './invitations';
import { kvRoutes } from './kv';
import { mediaRoutes } from './media';
import { operationRoutes } from './operations';
import { playbackRoutes } from './playback';
import { playlistRoutes } from './playlists';
import { screenRoutes } from './screens';
import { statusRoutes } from './status';
import { accountRoutes, enrollRoute, projectRoutes } from './tenants';
import { ClientTransport, type ClientOptions } from './transport';

export function createMarqueeClient(options: ClientOptions) {
  const transport = new ClientTransport(options);
  const operations = operationRoutes(transport);
  return {
    transport,
    /** Use this bearer for the calls that follow (e.g. the token enrollment returned). */
    useToken: (token: string | undefined) => transport.setToken(token),
    status: statusRoutes(transport),
    enroll: enrollRoute(transport),
    account: accountRoutes(transport),
    project: projectRoutes(transport),
    operations,
    events: eventRoutes(transport),
    applications: applicationRoutes(transport, operations),
    media: mediaRoutes(transport, operations),
    playlists: playlistRoutes(transport),
    screens: screenRoutes(transport),
    kv: kvRoutes(transport),
    invitations: invitationRoutes(transport),
    billing: billingRoutes(transport),
    agents: agentRoutes(transport),
    comments: commentRoutes(transport),
    feedback: feedbackRoutes(transport),
    playback: playbackRoutes(transport),
  };
}

export type MarqueeClient = ReturnType<typeof createMarqueeClient>;

export { MarqueeNetworkError, MarqueeProblem, type Credits, type FieldProblem, type ProblemDocument } from './problem';
export { OperationFailedError, OperationTimeoutError, type WaitOptions } from './operations';
export {
  ClientTransport,
  ifMatch,
  newIdempotencyKey,
  revisionOf,
  type CallOptions,
  type ClientOptions,
  type GuardedCallOptions,
  type MarqueeResult,
  type RequestSpec,
  type ResultMeta,
  type RetryNotice,
  type Revisioned,
} from './transport';
export {
  archiveHeaders,
  type ArchiveFacts,
  type ArchiveUpload,
  type PackedArchive,
  type PublishedApplication,
  type PublishOptions,
  type UploadOptions,
} from './applications';
export {
  mediaContentTypeOf,
  parseContentRange,
  rangeHeader,
  type ByteRange,
  type ContentOptions,
  type ContentRange,
  type MediaContent,
  type MediaSource,
  type MediaUploadOptions,
  type StreamedMedia,
  type UploadedMedia,
} from './media';
export type { FollowOptions } from './events';
export type { KvSetOptions } from './kv';
export type { PlaylistDocument, PlaylistDocumentV2 } from './playlists';
export type { RawBody, UploadProgress } from './upload-body';
