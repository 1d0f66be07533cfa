// The project's screens (pairing_pending and active), kept live: an event about a screen refetches
// that screen (batched), and a slow poll refreshes presence, which no event announces yet.
import { createStore } from 'zustand/vanilla';
import type { EventRecord } from '../../../sdk/contract/events';
import type { Screen } from '../../../sdk/contract/screens';
import type { DashboardClient } from '../api/dashboard-client';
import { removesScreen, screenIdOf } from '../screens/screen-events';
import { problemMessage } from './problem-message';

/** Events arriving together (a replay, a fleet action) refetch each screen once. */
export const REFETCH_BATCH_MS = 250;

export interface ScreensState {
  byId: Record<string, Screen>;
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
    return {
      byId: {},
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
        pending.add(id);
        if (timer === undefined) timer = setTimeout(() => void refetch(), batchMs);
      },
    };
  });
}
