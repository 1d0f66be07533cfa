// An application upload from the dashboard: pack (a folder) or read (an archive), then the SDK's
// own upload call (the same headers, Idempotency-Key and problems as `marquee app upload`) over a
// fetch made of XMLHttpRequest, which reports the bytes sent (fetch cannot in browsers over
// HTTP/1.1), then a wait for the operation that checks and publishes the release.
import { createStore } from 'zustand/vanilla';
import { applicationRoutes } from '../../../sdk/client/applications';
import type { OperationAccepted } from '../../../sdk/contract/applications';
import type { DashboardClient } from '../api/dashboard-client';
import { byteSize } from '../app/format';
import { problemClause } from '../state/problem-message';
import { archiveFile, BrowserPackError, folderFiles, type PackedFacts, packFolder } from './browser-pack';

export type AppUploadStage = 'idle' | 'packing' | 'uploading' | 'processing' | 'done' | 'failed';

export interface AppUploadState {
  stage: AppUploadStage;
  /** What is being uploaded: the archive's or the folder's name. */
  source: string;
  sent: number;
  total: number;
  error: string | null;
  /** Once accepted: the application and the release this upload creates. */
  accepted: OperationAccepted | null;
  /** What the packer left out, when it packed here (a folder, a .zip); null for an archive sent as it is. */
  ignored: string[] | null;
}

export const IDLE: AppUploadState = {
  stage: 'idle',
  source: '',
  sent: 0,
  total: 0,
  error: null,
  accepted: null,
  ignored: null,
};

/** What packing left out, in the words of `marquee app pack` ("left out: nothing"); '' when nothing was packed here. */
export function leftOutText(state: Pick<AppUploadState, 'ignored'>): string {
  if (state.ignored === null) return '';
  return `Left out: ${state.ignored.length > 0 ? state.ignored.join(', ') : 'nothing'}.`;
}

/** A published upload's outcome, to show where the page goes next (the new application's page). */
export function outcomeLines(state: AppUploadState): string[] {
  return [progressText(state), leftOutText(state)].filter(Boolean);
}

/** The progress line's words for a state. */
export function progressText(state: AppUploadState): string {
  switch (state.stage) {
    case 'idle':
      return '';
    case 'packing':
      return `Packing ${state.source}…`;
    case 'uploading':
      return `Uploading ${state.source}: ${byteSize(state.sent)} of ${byteSize(state.total)}`;
    case 'processing':
      return `Checking and publishing ${state.source}…`;
    case 'done':
      return `Published ${state.source} as release ${state.accepted?.release_id ?? ''}.`;
    case 'failed':
      return `${state.source} was not published: ${state.error ?? 'the upload failed'}`;
  }
}

/** The bar's fraction: sending fills it; checking holds it full. */
export function progressValue(state: AppUploadState): number {
  if (state.stage === 'processing' || state.stage === 'done') return 1;
  if (state.stage !== 'uploading' || state.total === 0) return 0;
  return Math.min(1, state.sent / state.total);
}

/** A fetch over XMLHttpRequest that tells `onSent` how many body bytes went out. */
export function xhrFetch(onSent: (sent: number, total: number) => void): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      const url = input instanceof Request ? input.url : String(input);
      xhr.open(init.method ?? 'GET', url);
      xhr.responseType = 'arraybuffer';
      xhr.withCredentials = init.credentials === 'include';
      new Headers(init.headers).forEach((value, name) => {
        if (name !== 'content-length' && name !== 'host') xhr.setRequestHeader(name, value);
      });
      xhr.upload.onprogress = (e) => onSent(e.loaded, e.total);
      xhr.onload = () => {
        const headers = new Headers();
        for (const line of xhr
          .getAllResponseHeaders()
          .trim()
          .split(/[\r\n]+/)) {
          const at = line.indexOf(':');
          if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
        }
        const empty = xhr.status === 204 || xhr.status === 304;
        resolve(new Response(empty ? null : (xhr.response as ArrayBuffer), { status: xhr.status, headers }));
      };
      xhr.onerror = () => reject(new TypeError('the upload did not reach the server'));
      xhr.onabort = () => reject(new DOMException('the upload was cancelled', 'AbortError'));
      init.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
      xhr.send((init.body ?? null) as XMLHttpRequestBodyInit | null);
    });
}

export type AppUploadStore = ReturnType<typeof createAppUpload>;

/**
 * One upload at a time for a page: a new application, or (with `applicationId`) a new release of
 * one. `onPublished` hears the accepted upload once its release is ready, with its outcome's lines.
 */
export function createAppUpload(
  client: DashboardClient,
  options: { applicationId?: string; onPublished: (accepted: OperationAccepted, outcome: string[]) => void },
) {
  return createStore<
    AppUploadState & {
      uploadArchive(file: File, name?: string): Promise<void>;
      uploadFolder(files: readonly File[], name?: string): Promise<void>;
    }
  >()((set, get) => {
    const run = async (source: string, prepare: () => Promise<PackedFacts>) => {
      if (get().stage === 'packing' || get().stage === 'uploading' || get().stage === 'processing') return;
      set({ ...IDLE, stage: 'packing', source });
      try {
        const facts = await prepare();
        const total = facts.archive instanceof Blob ? facts.archive.size : facts.archive.byteLength;
        set({ stage: 'uploading', total, sent: 0, ignored: facts.ignored ?? null });
        const transport = client.transportOver(xhrFetch((sent) => set({ sent: Math.min(sent, total) })));
        const accepted = (
          await applicationRoutes(transport, client.operations).upload(facts, { applicationId: options.applicationId })
        ).data;
        set({ stage: 'processing', sent: total, accepted });
        await client.operations.waitForSuccess(accepted.operation_id);
        set({ stage: 'done' });
        options.onPublished(accepted, outcomeLines(get()));
      } catch (error) {
        const error_ = error instanceof BrowserPackError ? error.message : problemClause(error, 'the upload failed');
        set({ stage: 'failed', error: error_ });
      }
    };
    return {
      ...IDLE,
      uploadArchive: (file, name) => run(file.name, () => archiveFile(file, name)),
      uploadFolder: (files, name) => {
        const first = files[0]?.webkitRelativePath.split('/')[0] || 'the folder';
        return run(first, () => packFolder(folderFiles(files), name));
      },
    };
  });
}
