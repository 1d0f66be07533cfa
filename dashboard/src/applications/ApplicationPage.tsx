// One application: its state and current release, a new release's upload, delete, and its
// key/value store (the owner's view: list page by page, read, write with If-Match, delete).
import { useCallback, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { useHistoryState } from 'wouter/use-browser-location';
import type { Application, OperationAccepted } from '../../../sdk/contract/applications';
import { useDashboard } from '../app/dashboard-context';
import { timeAgo } from '../app/format';
import { Notice, PageHeading } from '../app/PageHeading';
import { PAGES } from '../app/routes';
import { useLoaded } from '../app/use-loaded';
import { useNow } from '../app/use-now';
import { problemMessage } from '../state/problem-message';
import { STATE_TEXT, type UploadOutcomeState } from './ApplicationsPage';
import { KvBrowser } from './KvBrowser';
import { UploadPanel } from './UploadPanel';
import './applications.css';

export default function ApplicationPage({ id }: { id: string }) {
  const { client } = useDashboard();
  const now = useNow();
  const app = useLoaded<Application>(
    async () => (await client.applications.get(id)).data,
    [client, id],
    'The application',
  );
  /** Releases published from this page, newest first (the API lists no releases; each is immutable). */
  const [published, setPublished] = useState<string[]>([]);
  const onPublished = useCallback(
    (accepted: OperationAccepted) => {
      setPublished((list) => [accepted.release_id, ...list]);
      app.reload();
    },
    [app.reload],
  );
  // Published from the Applications page, which came here: its outcome line, kept.
  const arrived = useHistoryState<Partial<UploadOutcomeState> | null>()?.uploadOutcome;
  const a = app.value;
  return (
    <section className="page">
      <p className="crumbs">
        <Link href={PAGES.applications}>Applications</Link>
      </p>
      <PageHeading>{a?.name ?? 'Application'}</PageHeading>
      <Notice text={arrived?.join(' ') || null} />
      <Notice text={app.error} error />
      {a && (
        <>
          <dl className="facts">
            <dt>State</dt>
            <dd data-testid="application-state">{STATE_TEXT[a.state]}</dd>
            <dt>Current release</dt>
            <dd>
              <code data-testid="current-release">{a.latest_ready_release ?? 'none yet'}</code>
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{a.id}</code>
            </dd>
            <dt>Created</dt>
            <dd>{timeAgo(a.created_at, now)}</dd>
            <dt>Updated</dt>
            <dd>{timeAgo(a.updated_at, now)}</dd>
          </dl>
          <section className="panel" aria-labelledby="releases-heading">
            <h2 id="releases-heading">Releases</h2>
            <p className="hint">
              Every upload is an immutable release. A playlist names the release it plays; the current release is the
              newest one that is ready, the one an agent pins by default.
            </p>
            <ul className="plain-list" data-testid="releases">
              {a.latest_ready_release && (
                <li>
                  <code>{a.latest_ready_release}</code> (current)
                </li>
              )}
              {published
                .filter((r) => r !== a.latest_ready_release)
                .map((r) => (
                  <li key={r}>
                    <code>{r}</code> (published here)
                  </li>
                ))}
            </ul>
          </section>
          <UploadPanel applicationId={a.id} onPublished={onPublished} />
          <KvBrowser applicationId={a.id} />
          <DeleteApplication app={a} />
        </>
      )}
    </section>
  );
}

function DeleteApplication({ app }: { app: Application }) {
  const { client } = useDashboard();
  const [, navigate] = useLocation();
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    try {
      await client.applications.delete(app.id, { ifMatch: app.revision });
      navigate(PAGES.applications);
    } catch (e) {
      setConfirming(false);
      setError(problemMessage(e, `${app.name} could not be deleted`));
    }
  };
  return (
    <section className="panel" aria-labelledby="delete-app-heading">
      <h2 id="delete-app-heading">Delete</h2>
      <Notice text={error} error />
      {!confirming ? (
        <button type="button" className="quiet danger-text" onClick={() => setConfirming(true)}>
          Delete this application…
        </button>
      ) : (
        <fieldset className="confirm">
          <legend>
            Delete {app.name} and all its releases for good? While a screen plays it, it cannot be deleted; remove it
            from those playlists first.
          </legend>
          <button type="button" className="danger" onClick={() => void remove()}>
            Delete {app.name}
          </button>
          <button type="button" className="quiet" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </fieldset>
      )}
    </section>
  );
}
