// Uploads a person dropped, each through the flow every client uses: hash → declare → signed PUT
// (with progress) → commit → wait for verification. Files go one after another (the server's
// admission budget is per project), each with its own progress and outcome.
import { createStore } from 'zustand/vanilla';
import { mediaContentTypeOf } from '../../../sdk/client/media';
import { MarqueeNetworkError, MarqueeProblem } from '../../../sdk/client/problem';
import { OperationFailedError } from '../../../sdk/client/operations';
import { sha256Hex } from '../../../sdk/client/upload-body';
import { MEDIA_CONTENT_TYPES, type Media, type MediaContentType } from '../../../sdk/contract/media';
import type { DashboardClient } from '../api/dashboard-client';
import { problemClause } from '../state/problem-message';
import { putSigned } from './signed-put';

/** Why an upload failed, to follow the list's "Failed: " without saying "failed" twice. */
export function uploadFailure(error: unknown): string {
  if (error instanceof MarqueeNetworkError) return 'the server did not answer. Check the connection.';
  if (error instanceof MarqueeProblem || error instanceof OperationFailedError)
    return problemClause(error, 'the server refused it');
  // Refused here before anything was sent (not media Marquee plays), or the storage's answer.
  return error instanceof Error && error.message ? error.message : 'the upload stopped';
}

export type UploadStage = 'queued' | 'hashing' | 'uploading' | 'verifying' | 'done' | 'failed';

export interface Upload {
  id: number;
  name: string;
  bytes: number;
  sent: number;
  stage: UploadStage;
  error: string | null;
}

export interface UploadQueueState {
  uploads: Upload[];
  add(files: readonly File[]): void;
  /** Forget the finished and failed ones. */
  clearFinished(): void;
}

export type UploadQueue = ReturnType<typeof createUploadQueue>;

/** The fraction of a file's bar: sending is the bar; verifying holds it full. */
export function progressOf(upload: Pick<Upload, 'sent' | 'bytes' | 'stage'>): number {
  if (upload.stage === 'verifying' || upload.stage === 'done') return 1;
  return upload.bytes > 0 ? Math.min(1, upload.sent / upload.bytes) : 0;
}

export function createUploadQueue(client: DashboardClient, onReady: (media: Media) => void) {
  let next = 1;
  const files = new Map<number, File>();
  let running = false;
  return createStore<UploadQueueState>()((set, get) => {
    const change = (id: number, patch: Partial<Upload>) =>
      set({ uploads: get().uploads.map((u) => (u.id === id ? { ...u, ...patch } : u)) });

    const uploadOne = async (upload: Upload, file: File) => {
      const declared = (MEDIA_CONTENT_TYPES as readonly string[]).includes(file.type)
        ? (file.type as MediaContentType)
        : undefined;
      const contentType = mediaContentTypeOf(file.name) ?? declared;
      if (!contentType) throw new Error('this kind of file is not media Marquee plays (images, video, audio)');
      change(upload.id, { stage: 'hashing' });
      const sha256 = await sha256Hex(file);
      const session = (
        await client.media.declare({ filename: file.name, content_type: contentType, bytes: file.size, sha256 })
      ).data;
      change(upload.id, { stage: 'uploading' });
      await putSigned(session, file, (sent) => change(upload.id, { sent }));
      change(upload.id, { stage: 'verifying', sent: file.size });
      const committed = (await client.media.commit(session.id, { content_type: contentType, bytes: file.size, sha256 }))
        .data;
      const operation = await client.operations.waitForSuccess(committed.id);
      const mediaId = operation.result?.media_id;
      if (typeof mediaId !== 'string') throw new Error('the server finished without naming the media');
      onReady((await client.media.get(mediaId)).data);
    };

    const drain = async () => {
      if (running) return;
      running = true;
      try {
        for (;;) {
          const upload = get().uploads.find((u) => u.stage === 'queued');
          if (!upload) break;
          const file = files.get(upload.id)!;
          try {
            await uploadOne(upload, file);
            change(upload.id, { stage: 'done' });
          } catch (error) {
            change(upload.id, { stage: 'failed', error: uploadFailure(error) });
          } finally {
            files.delete(upload.id);
          }
        }
      } finally {
        running = false;
      }
    };

    return {
      uploads: [],
      add(added) {
        const fresh = added.map((file) => {
          const id = next++;
          files.set(id, file);
          return { id, name: file.name, bytes: file.size, sent: 0, stage: 'queued' as const, error: null };
        });
        set({ uploads: [...get().uploads, ...fresh] });
        void drain();
      },
      clearFinished() {
        set({ uploads: get().uploads.filter((u) => u.stage !== 'done' && u.stage !== 'failed') });
      },
    };
  });
}
