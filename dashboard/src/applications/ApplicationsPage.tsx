// Applications: the project's web apps with their state and current release, and an upload of a
// new one from an archive or a folder.
import { useCallback } from 'react';
import { Link, useLocation } from 'wouter';
import type { Application } from '../../../sdk/contract/applications';
import { useDashboard } from '../app/dashboard-context';
import { timeAgo } from '../app/format';
import { Notice, PageHeading } from '../app/PageHeading';
import { applicationPath } from '../app/routes';
import { useLoaded } from '../app/use-loaded';
import { useNow } from '../app/use-now';
import { UploadPanel } from './UploadPanel';
import './applications.css';

/** What the Applications page hands the page of an application it just published (history state). */
export interface UploadOutcomeState {
  uploadOutcome: string[];
}

export const STATE_TEXT: Record<Application['state'], string> = {
  ready: 'Ready',
  pending: 'Publishing',
  failed: 'Upload failed',
};

export default function ApplicationsPage() {
  const { client } = useDashboard();
  const [, navigate] = useLocation();
  const now = useNow();
  const apps = useLoaded(async () => (await client.applications.list()).data.items, [client], 'The applications');
  const published = useCallback(
    (accepted: { id: string }, outcome: string[]) => {
      apps.reload();
      // The new application's page shows what the upload's line said (published as, left out).
      navigate(applicationPath(accepted.id), { state: { uploadOutcome: outcome } satisfies UploadOutcomeState });
    },
    [apps.reload, navigate],
  );
  const items = [...(apps.value ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <section className="page">
      <PageHeading>Applications</PageHeading>
      <UploadPanel onPublished={published} />
      <Notice text={apps.error} error />
      {apps.value?.length === 0 && <p className="empty-state">No applications yet. Upload one above.</p>}
      {items.length > 0 && (
        <table className="table" data-testid="applications">
          <caption className="visually-hidden">Applications</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col">Current release</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {items.map((app) => (
              <tr key={app.id}>
                <th scope="row">
                  <Link href={applicationPath(app.id)}>{app.name}</Link>
                </th>
                <td data-label="State">{STATE_TEXT[app.state]}</td>
                <td data-label="Current release">
                  <code>{app.latest_ready_release ?? '—'}</code>
                </td>
                <td data-label="Updated">{timeAgo(app.updated_at, now)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
