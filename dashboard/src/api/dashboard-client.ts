// One client for the whole app: the SDK's typed modules over the dashboard fetch, plus the
// dashboard's own session routes (sign-in, projects, members, balance) on the same transport.
import type {
  DashboardBalance,
  DashboardMemberList,
  DashboardProjectList,
  DashboardSession,
  PasskeyAssertion,
} from '../../../sdk/contract/people';
import { applicationRoutes } from '../../../sdk/client/applications';
import { eventRoutes } from '../../../sdk/client/events';
import { invitationRoutes } from '../../../sdk/client/invitations';
import { kvRoutes } from '../../../sdk/client/kv';
import { mediaRoutes } from '../../../sdk/client/media';
import { operationRoutes } from '../../../sdk/client/operations';
import { playbackRoutes } from '../../../sdk/client/playback';
import { playlistRoutes } from '../../../sdk/client/playlists';
import { screenRoutes } from '../../../sdk/client/screens';
import { ClientTransport } from '../../../sdk/client/transport';
import { createDashboardFetch } from './dashboard-fetch';

export function createDashboardClient(origin: string, options: { onUnauthorized: () => void }) {
  let csrf = '';
  const fetch = createDashboardFetch(origin, { csrfToken: () => csrf, onUnauthorized: options.onUnauthorized });
  const t = new ClientTransport({ baseUrl: origin, fetch, maxAttempts: 2 });
  const operations = operationRoutes(t);
  const remember = (session: DashboardSession) => {
    csrf = session.csrf_token;
    return session;
  };
  const session = {
    current: async () =>
      remember((await t.request<DashboardSession>({ method: 'GET', path: '/dashboard/v1/session' })).data),
    signIn: async (email: string, password: string) =>
      remember(
        (
          await t.request<DashboardSession>({
            method: 'POST',
            path: '/dashboard/v1/sign-in',
            json: { email, password },
          })
        ).data,
      ),
    /** A discoverable passkey (the browser asks which); undefined where the browser has no passkeys. */
    signInWithPasskey: async () => {
      const start = (await t.request<PasskeyAssertion>({ method: 'POST', path: '/dashboard/v1/webauthn/assertions' }))
        .data;
      const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(
        start.request_options as unknown as PublicKeyCredentialRequestOptionsJSON,
      );
      const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
      if (!credential) throw new Error('no passkey was chosen');
      return remember(
        (
          await t.request<DashboardSession>({
            method: 'POST',
            path: '/dashboard/v1/webauthn/assertions/complete',
            json: { ceremony_id: start.ceremony_id, credential: credential.toJSON() },
          })
        ).data,
      );
    },
    signOut: async () => {
      await t.request<void>({ method: 'POST', path: '/dashboard/v1/logout' });
      csrf = '';
    },
    projects: async () =>
      (await t.request<DashboardProjectList>({ method: 'GET', path: '/dashboard/v1/projects' })).data.items,
    selectProject: async (projectId: string) =>
      remember(
        (
          await t.request<DashboardSession>({
            method: 'PUT',
            path: '/dashboard/v1/session/project',
            json: { project_id: projectId },
          })
        ).data,
      ),
    members: async () =>
      (await t.request<DashboardMemberList>({ method: 'GET', path: '/dashboard/v1/members' })).data.items,
    balance: async () => (await t.request<DashboardBalance>({ method: 'GET', path: '/dashboard/v1/balance' })).data,
  };
  return {
    transport: t,
    /**
     * A transport like the app's whose requests go through `base` (the application upload's
     * XMLHttpRequest fetch, which reports bytes sent), with the same path, cookie and CSRF rules.
     */
    transportOver: (base: typeof fetch) =>
      new ClientTransport({
        baseUrl: origin,
        fetch: createDashboardFetch(origin, {
          csrfToken: () => csrf,
          onUnauthorized: options.onUnauthorized,
          fetch: base,
        }),
        maxAttempts: 2,
      }),
    session,
    operations,
    screens: screenRoutes(t),
    playlists: playlistRoutes(t),
    media: mediaRoutes(t, operations),
    events: eventRoutes(t),
    invitations: invitationRoutes(t),
    applications: applicationRoutes(t, operations),
    kv: kvRoutes(t),
    playback: playbackRoutes(t),
  };
}

/** Whether this browser can sign in with a passkey (WebAuthn with the JSON helpers). */
export function passkeysAvailable(): boolean {
  return (
    typeof PublicKeyCredential !== 'undefined' && typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function'
  );
}

export type DashboardClient = ReturnType<typeof createDashboardClient>;
