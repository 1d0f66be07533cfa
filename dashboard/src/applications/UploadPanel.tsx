// Choose an archive (.tar.gz, .tgz, .tar) or a folder to upload as an application or a new
// release, and follow it on one progress line until the release is published.
import { useId, useMemo, useState } from 'react';
import { useStore } from 'zustand';
import type { OperationAccepted } from '../../../sdk/contract/applications';
import { useDashboard } from '../app/dashboard-context';
import { createAppUpload, leftOutText, progressText, progressValue } from './app-upload';

export function UploadPanel({
  applicationId,
  onPublished,
}: {
  /** A new release of this application; a new application when absent. */
  applicationId?: string;
  onPublished: (accepted: OperationAccepted, outcome: string[]) => void;
}) {
  const { client } = useDashboard();
  const upload = useMemo(
    () => createAppUpload(client, { applicationId, onPublished }),
    [client, applicationId, onPublished],
  );
  const state = useStore(upload);
  const [name, setName] = useState('');
  const id = useId();
  const busy = state.stage === 'packing' || state.stage === 'uploading' || state.stage === 'processing';
  const text = progressText(state);
  const leftOut = leftOutText(state);
  return (
    <section className="panel app-upload" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{applicationId ? 'Upload a new release' : 'Upload an application'}</h2>
      <p className="hint">
        A built static web app with an <code>index.html</code> at its root: a <code>.tar.gz</code>, <code>.tar</code> or{' '}
        <code>.zip</code> archive, or the build folder itself (packed here the way <code>marquee app pack</code> packs
        it).
      </p>
      {!applicationId && (
        <label>
          <span>Name (optional)</span>
          <input value={name} onChange={(e) => setName(e.currentTarget.value)} maxLength={120} disabled={busy} />
        </label>
      )}
      <div className="row">
        <label className={`button${busy ? ' disabled' : ''}`}>
          Choose an archive
          <input
            type="file"
            accept=".tar.gz,.tgz,.tar,.zip,application/gzip,application/x-tar,application/zip"
            className="visually-hidden"
            disabled={busy}
            data-testid="archive-input"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              e.currentTarget.value = '';
              if (file) void upload.getState().uploadArchive(file, name);
            }}
          />
        </label>
        <label className={`button${busy ? ' disabled' : ''}`}>
          Choose a folder
          <input
            type="file"
            className="visually-hidden"
            disabled={busy}
            data-testid="folder-input"
            {...{ webkitdirectory: '' }}
            onChange={(e) => {
              const files = [...(e.currentTarget.files ?? [])];
              e.currentTarget.value = '';
              if (files.length) void upload.getState().uploadFolder(files, name);
            }}
          />
        </label>
      </div>
      <div className={`upload-line ${state.stage}`} data-testid="app-upload-progress">
        {state.stage !== 'idle' && <progress max={1} value={progressValue(state)} aria-label="Upload progress" />}
        <p role="status" className={state.stage === 'failed' ? 'error' : undefined}>
          {text}
        </p>
        {leftOut && (
          <p className="hint" data-testid="app-upload-left-out">
            {leftOut}
          </p>
        )}
      </div>
    </section>
  );
}
