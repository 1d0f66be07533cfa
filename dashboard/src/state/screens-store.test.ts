// The screens store: loads the list, refetches the screens events name (once per batch), drops the
// ones archived or gone, and sorts by label.
import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../../sdk/contract/events';
import type { Screen } from '../../../sdk/contract/screens';
import type { DashboardClient } from '../api/dashboard-client';
import { createScreensStore, sortedScreens } from './screens-store';

const screen = (id: string, label: string, extra: Partial<Screen> = {}): Screen =>
  ({ id, label, name: label, state: 'active', online: false, tags: [], ...extra }) as Screen;

function fakeClient(server: Map<string, Screen>) {
  const gets: string[] = [];
  const client = {
    screens: {
      list: async () => ({ data: { items: [...server.values()] } }),
      get: async (id: string) => {
        gets.push(id);
        const found = server.get(id);
        if (!found) throw new Error('not_found');
        return { data: found };
      },
    },
  } as unknown as DashboardClient;
  return { client, gets };
}

const event = (type: string, id: string): EventRecord => ({
  type,
  resource: { type: 'screen', id },
  sequence: 1,
  cursor: 'c',
  severity: 'info',
  message: '',
  at: '',
});

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('the screens store', () => {
  it('refetches a screen once for a burst of events about it, and shows what the server says', async () => {
    const server = new Map([['scr_a', screen('scr_a', 'Lobby')]]);
    const { client, gets } = fakeClient(server);
    const store = createScreensStore(client, 5);
    await store.getState().load();
    server.set('scr_a', screen('scr_a', 'Lobby', { online: true }));
    store.getState().apply(event('screen.activated', 'scr_a'));
    store.getState().apply(event('runtime.reported', 'scr_a'));
    await settle();
    expect(gets).toEqual(['scr_a']);
    expect(store.getState().byId.scr_a!.online).toBe(true);
  });

  it('drops a screen on screen.archived without asking, and one the server no longer has', async () => {
    const server = new Map([
      ['scr_a', screen('scr_a', 'A')],
      ['scr_b', screen('scr_b', 'B')],
    ]);
    const { client, gets } = fakeClient(server);
    const store = createScreensStore(client, 5);
    await store.getState().load();
    store.getState().apply(event('screen.archived', 'scr_a'));
    server.delete('scr_b');
    store.getState().apply(event('screen.updated', 'scr_b'));
    await settle();
    expect(gets).toEqual(['scr_b']);
    expect(Object.keys(store.getState().byId)).toEqual([]);
  });

  it('ignores events about other resources', async () => {
    const { client, gets } = fakeClient(new Map());
    const store = createScreensStore(client, 5);
    store.getState().apply({ ...event('media.ready', 'med_x'), resource: { type: 'media', id: 'med_x' } });
    await settle();
    expect(gets).toEqual([]);
  });

  it('applies presence and display events to the screens in hand without a request each', async () => {
    const server = new Map([
      ['scr_a', screen('scr_a', 'A')],
      [
        'scr_b',
        screen('scr_b', 'B', {
          online: true,
          health: { presence: 'online', last_seen_at: '2026-11-27T13:59:00Z', offline_since: null } as Screen['health'],
        }),
      ],
    ]);
    const { client, gets } = fakeClient(server);
    const store = createScreensStore(client, 5);
    await store.getState().load();
    const at = '2026-11-27T14:02:00Z';
    store.getState().apply({
      ...event('screen.online', 'scr_a'),
      at,
      details: { last_seen_at: at, offline_since: '2026-11-27T13:00:00Z' },
    });
    store.getState().apply({
      ...event('screen.offline', 'scr_b'),
      details: { last_seen_at: at, offline_since: at },
    });
    store.getState().apply({ ...event('screen.display_changed', 'scr_a'), details: { power: 'off', schedule: null } });
    await settle();
    expect(gets).toEqual([]);
    const { byId, live } = store.getState();
    expect(byId.scr_a).toMatchObject({ online: true, last_online_at: at });
    expect(byId.scr_b!.online).toBe(false);
    // The health the status dot and "offline since" read follows the event too.
    expect(byId.scr_b!.health).toMatchObject({ presence: 'offline', last_seen_at: at, offline_since: at });
    expect(byId.scr_a!.health).toBeUndefined();
    expect(live.scr_a).toEqual({ onlineSince: at, display: 'off' });
    expect(live.scr_b?.onlineSince).toBeUndefined();
    // A screen not in hand yet (paired in another tab) is read instead.
    server.set('scr_c', screen('scr_c', 'C', { online: true }));
    store.getState().apply({ ...event('screen.online', 'scr_c'), details: { last_seen_at: at, offline_since: null } });
    await settle();
    expect(gets).toEqual(['scr_c']);
  });

  it('sorts by label, then id', () => {
    const sorted = sortedScreens({
      b: screen('b', 'Lobby'),
      a: screen('a', 'Lobby'),
      c: screen('c', 'Entrance'),
    });
    expect(sorted.map((s) => s.id)).toEqual(['c', 'a', 'b']);
  });
});
