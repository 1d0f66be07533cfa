// The project's screens (pairing_pending and active), kept live: an event about a screen refetches
// that screen (batched); presence and display events are applied as they come, without a request
// (a grid of 500 must not read 500 screens when the power goes out), and keep what the screen view
// does not carry (since when it is online, its display power). A slow poll still refreshes the
// live presence dot, which the debounced presence events announce only after a minute.
import { createStore } from 'zustand/vanilla';
import type { EventRecord } from '../../../sdk/contract/events';
import type { Screen } from '../../../sdk/contract/screens';
import type { DashboardClient } from '../api/dashboard-client';
import { removesScreen, screenIdOf } from '../screens/screen-events';
import { problemMessage } from './problem-message';

/** Events arriving together (a replay, a fleet action) refetch each screen once. */
export const REFETCH_BATCH_MS = 250;

/** What the event stream told about a screen that its view does not carry. */
export interface ScreenLive {
  /** When it was announced online (screen.online); absent while offline or not seen since the page opened. */
  onlineSince?: string;
  /** Its display power as last changed (screen.display_changed); null: back to its schedule. */
  display?: 'on' | 'off' | null;
}

export interface ScreensState {
  byId: Record<string, Screen>;
  live: Record<string, ScreenLive>;
  loaded: boolean;
  error: string | null;
  load(): Promise<void>;
  /** Puts a screen the app just read or changed (a pairing, an assignment) in the list. */
  put(screen: Screen): void;
  /** Takes a screen off the list (archived or deleted here). */
  remove(id: string): void;
  apply(event: EventRecord): void;
}

export type ScreensStore = ReturnType<typeof createScreensStore>;

/** Screens in the order the list shows them: by label, then id. */
export function sortedScreens(byId: Record<string, Screen>): Screen[] {
  return Object.values(byId).sort((a, b) => a.label.localeCompare(b.label) || a.id.localeCompare(b.id));
}

export function createScreensStore(client: DashboardClient, batchMs = REFETCH_BATCH_MS) {
  const pending = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  return createStore<ScreensState>()((set, get) => {
    const refetch = async () => {
      timer = undefined;
      const ids = [...pending];
      pending.clear();
      for (const id of ids) {
        try {
          const screen = (await client.screens.get(id)).data;
          if (screen.state === 'active' || screen.state === 'pairing_pending') get().put(screen);
          else drop(id);
        } catch {
          drop(id); // not_found: deleted, or no longer ours
        }
      }
    };
    const drop = (id: string) => {
      set({ byId: Object.fromEntries(Object.entries(get().byId).filter(([key]) => key !== id)) });
    };
    const note = (id: string, patch: ScreenLive) =>
      set({ live: { ...get().live, [id]: { ...get().live[id], ...patch } } });
    /** Applies a presence event to the screen in hand; false when there is none to patch. */
    const presence = (id: string, event: EventRecord): boolean => {
      const current = get().byId[id];
      if (!current) return false;
      const online = event.type === 'screen.online';
      const details = (event.details ?? {}) as { last_seen_at?: string; offline_since?: string | null };
      const health = current.health && {
        ...current.health,
        presence: online ? ('online' as const) : ('offline' as const),
        last_seen_at: details.last_seen_at ?? current.health.last_seen_at,
        offline_since: online ? null : (details.offline_since ?? current.health.offline_since),
      };
      set({
        byId: {
          ...get().byId,
          [id]: {
            ...current,
            online,
            ...(details.last_seen_at ? { last_online_at: details.last_seen_at } : {}),
            ...(health ? { health } : {}),
          },
        },
      });
      note(id, { onlineSince: online ? event.at : undefined });
      return true;
    };
    return {
      byId: {},
      live: {},
      loaded: false,
      error: null,
      async load() {
        try {
          const items = (await client.screens.list()).data.items;
          set({ byId: Object.fromEntries(items.map((s) => [s.id, s])), loaded: true, error: null });
        } catch (error) {
          set({ loaded: true, error: problemMessage(error, 'The screens could not be loaded') });
        }
      },
      put(screen) {
        set({ byId: { ...get().byId, [screen.id]: screen } });
      },
      remove(id) {
        drop(id);
      },
      apply(event) {
        const id = screenIdOf(event);
        if (!id) return;
        if (removesScreen(event)) {
          drop(id);
          return;
        }
        if (event.type === 'screen.display_changed') {
          const power = (event.details as { power?: 'on' | 'off' | null } | undefined)?.power ?? null;
          note(id, { display: power });
          return;
        }
        if ((event.type === 'screen.online' || event.type === 'screen.offline') && presence(id, event)) return;
        pending.add(id);
        if (timer === undefined) timer = setTimeout(() => void refetch(), batchMs);
      },
    };
  });
}
