// The app's one client and its stores, made once at boot and handed down by context.
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import { createDashboardClient, type DashboardClient } from '../api/dashboard-client';
import { createEventsStore, type EventsState, type EventsStore } from '../state/events-store';
import { createScreensStore, type ScreensState, type ScreensStore } from '../state/screens-store';
import { createSessionStore, type SessionState, type SessionStore } from '../state/session-store';

export interface Dashboard {
  client: DashboardClient;
  session: SessionStore;
  screens: ScreensStore;
  events: EventsStore;
}

export function createDashboard(origin: string): Dashboard {
  let session: SessionStore | undefined;
  const client = createDashboardClient(origin, { onUnauthorized: () => session?.getState().ended() });
  session = createSessionStore(client);
  return { client, session, screens: createScreensStore(client), events: createEventsStore() };
}

export const DashboardContext = createContext<Dashboard | null>(null);

export function useDashboard(): Dashboard {
  const dashboard = useContext(DashboardContext);
  if (!dashboard) throw new Error('useDashboard outside <DashboardContext>');
  return dashboard;
}

export function useSession<T>(select: (s: SessionState) => T): T {
  return useStore(useDashboard().session, select);
}

export function useScreens<T>(select: (s: ScreensState) => T): T {
  return useStore(useDashboard().screens, select);
}

export function useEvents<T>(select: (s: EventsState) => T): T {
  return useStore(useDashboard().events, select);
}
