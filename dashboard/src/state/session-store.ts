// Who is signed in, to which project, and the projects they may switch to.
import { createStore } from 'zustand/vanilla';
import type { DashboardProjectList, DashboardSession } from '../../../sdk/contract/people';
import type { DashboardClient } from '../api/dashboard-client';
import { problemMessage } from './problem-message';

export type SessionPhase = 'loading' | 'signed-out' | 'signed-in';

export interface SessionState {
  phase: SessionPhase;
  session: DashboardSession | null;
  projects: DashboardProjectList['items'];
  /** Why the person is on the sign-in page (a failed attempt, an ended session). */
  notice: string | null;
  busy: boolean;
  load(): Promise<void>;
  signIn(email: string, password: string): Promise<void>;
  signInWithPasskey(): Promise<void>;
  signOut(): Promise<void>;
  selectProject(projectId: string): Promise<void>;
  /** The server said 401: the session ended elsewhere (signed out, revoked, expired). */
  ended(): void;
}

export type SessionStore = ReturnType<typeof createSessionStore>;

export function createSessionStore(client: DashboardClient) {
  return createStore<SessionState>()((set, get) => {
    const signedIn = async (session: DashboardSession) => {
      const projects = await client.session.projects();
      set({ phase: 'signed-in', session, projects, notice: null, busy: false });
    };
    return {
      phase: 'loading',
      session: null,
      projects: [],
      notice: null,
      busy: false,
      async load() {
        try {
          await signedIn(await client.session.current());
        } catch {
          set({ phase: 'signed-out', session: null, projects: [] });
        }
      },
      async signIn(email, password) {
        set({ busy: true, notice: null });
        try {
          await signedIn(await client.session.signIn(email, password));
        } catch (error) {
          set({ busy: false, phase: 'signed-out', notice: problemMessage(error, 'Signing in failed') });
        }
      },
      async signInWithPasskey() {
        set({ busy: true, notice: null });
        try {
          await signedIn(await client.session.signInWithPasskey());
        } catch (error) {
          set({ busy: false, phase: 'signed-out', notice: problemMessage(error, 'Signing in with a passkey failed') });
        }
      },
      async signOut() {
        await client.session.signOut().catch(() => undefined);
        set({ phase: 'signed-out', session: null, projects: [], notice: 'You signed out.' });
      },
      async selectProject(projectId) {
        const session = await client.session.selectProject(projectId);
        set({ session, projects: get().projects.map((p) => ({ ...p, selected: p.id === projectId })) });
      },
      ended() {
        if (get().phase !== 'signed-in') return;
        set({ phase: 'signed-out', session: null, projects: [], notice: 'Your session ended. Sign in again.' });
      },
    };
  });
}
