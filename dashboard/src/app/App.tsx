// The app: the sign-in page until a session exists, then the shell (header, navigation) around
// the page the address names. Every page is reachable by keyboard; each moves focus to its heading.
import { lazy, type ReactNode, Suspense, useEffect } from 'react';
import { Link, Redirect, Route, Switch } from 'wouter';
import { BillingPage } from '../people/BillingPage';
import { EventsPage } from '../events/EventsPage';
import { MediaPage } from '../media/MediaPage';
import { MembersPage } from '../people/MembersPage';
import { PlaylistPage } from '../playlists/PlaylistPage';
import { PlaylistsPage } from '../playlists/PlaylistsPage';
import { ScreenPage } from '../screens/ScreenPage';
import { ScreensPage } from '../screens/ScreensPage';
import { SignInPage } from '../people/SignInPage';
import { followProject } from '../state/live-events';
import { useDashboard, useSession } from './dashboard-context';
import { PageHeading } from './PageHeading';
import { PAGES } from './routes';
import { Shell } from './Shell';

// Pages the screens page does not need, loaded when first opened (the first load stays small).
const ApplicationsPage = lazy(() => import('../applications/ApplicationsPage'));
const ApplicationPage = lazy(() => import('../applications/ApplicationPage'));
const ProofOfPlayPage = lazy(() => import('../proof/ProofOfPlayPage'));

export function App() {
  const { session } = useDashboard();
  const phase = useSession((s) => s.phase);
  useEffect(() => {
    void session.getState().load();
  }, [session]);
  if (phase === 'loading')
    return (
      <main className="centered" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  if (phase === 'signed-out') return <SignInPage />;
  return <SignedIn />;
}

function SignedIn() {
  const dashboard = useDashboard();
  const project = useSession((s) => s.session?.project ?? null);
  const projectId = project?.id;
  useEffect(() => {
    if (!projectId) return;
    dashboard.events.getState().clear();
    void dashboard.screens.getState().load();
    return followProject(dashboard.client, dashboard);
  }, [dashboard, projectId]);

  if (project?.membership !== 'project_member')
    return (
      <Shell>
        <section className="page">
          <h1>No project yet</h1>
          <p>
            You are signed in but not a member of a project. Ask a member (or the project's agent) for an invitation,
            then open its link.
          </p>
        </section>
      </Shell>
    );
  return (
    <Shell key={projectId}>
      <Switch>
        <Route path={PAGES.screens} component={ScreensPage} />
        <Route path={PAGES.screen}>{(params) => <ScreenPage id={params.id} />}</Route>
        <Route path={PAGES.playlists} component={PlaylistsPage} />
        <Route path={PAGES.playlist}>{(params) => <PlaylistPage id={params.id} />}</Route>
        <Route path={PAGES.media} component={MediaPage} />
        <Route path={PAGES.events} component={EventsPage} />
        <Route path={PAGES.members} component={MembersPage} />
        <Route path={PAGES.billing} component={BillingPage} />
        <Route path={PAGES.applications}>
          <Lazy>
            <ApplicationsPage />
          </Lazy>
        </Route>
        <Route path={PAGES.application}>
          {(params) => (
            <Lazy>
              <ApplicationPage id={params.id} />
            </Lazy>
          )}
        </Route>
        <Route path={PAGES.proofOfPlay}>
          <Lazy>
            <ProofOfPlayPage />
          </Lazy>
        </Route>
        <Route path={PAGES.home}>
          <Redirect to={PAGES.screens} replace />
        </Route>
        <Route component={NotFoundPage} />
      </Switch>
    </Shell>
  );
}

/** A mistyped address (the server answered it 404 with this shell). */
function NotFoundPage() {
  return (
    <section className="page" data-testid="not-found">
      <PageHeading>No such page</PageHeading>
      <p>
        There is no page at <code>{window.location.pathname}</code>. Check the address, or go to{' '}
        <Link href={PAGES.screens}>the screens</Link>.
      </p>
    </section>
  );
}

function Lazy({ children }: { children: ReactNode }) {
  return (
    <Suspense
      fallback={
        <section className="page" aria-busy="true">
          <p>Loading…</p>
        </section>
      }
    >
      {children}
    </Suspense>
  );
}
