// Every action on one screen, once: its budgets (spec Limits, fleet action budgets), what it checks
// before a budget is spent, and what it does and answers. The single-screen routes and each screen
// of a fleet action run these same entries, so a screen answers a fan-out exactly as it would answer
// its own route.
import type {
  FleetAction,
  FleetActionType,
  PlaylistScheduleEntry,
  ScreenPlaylistScheduleView,
} from '../../sdk/contract/fleet';
import { isoTime } from '../clock';
import { resolveSchedule } from '../manifests/playlist-schedule';
import { boundaryOf, resolvedOf, scheduleOf, unavailablePlaylists } from '../manifests/screen-resolution';
import * as changes from '../screens/screen-changes';
import * as commands from '../screens/screen-commands';
import * as schedules from '../screens/schedule-changes';
import type { ScreenTable } from '../screens/screens.tables';
import type { Services } from '../services';
import type { Db, Tx } from '../store/store';
import type { RateBudget } from '../http/rate-limit';

/** A budget family of the spec: the project's per-minute budget and each screen's own. */
export interface BudgetFamily {
  project: { name: string; limit: number; windowSeconds: number };
  screen: { name: string; limit: number; windowSeconds: number };
}

const perMinute = (name: string, limit: number) => ({ name, limit, windowSeconds: 60 });

/** spec Limits, fleet action budgets (per minute unless said). */
export const BUDGETS = {
  reload: { project: perMinute('reload-project', 600), screen: perMinute('reload-screen', 6) },
  toast: { project: perMinute('toast-project', 600), screen: perMinute('toast-screen', 20) },
  /** takeover, takeover clear, schedule set and clear */
  screenControl: {
    project: perMinute('screen-control-project', 600),
    screen: perMinute('screen-control-screen', 20),
  },
  /** spec: reboot-screen 2 per 10 minutes, so a hung box can be rebooted twice but not looped. */
  reboot: {
    project: perMinute('reboot-project', 600),
    screen: { name: 'reboot-screen', limit: 2, windowSeconds: 600 },
  },
  /** display, display clear, display schedule */
  display: { project: perMinute('display-project', 600), screen: perMinute('display-screen', 10) },
} as const satisfies Record<string, BudgetFamily>;

/**
 * spec: screen-control-ip 60 per minute, shared with single-screen DELETE and the takeover routes.
 * A fleet action of the screen-control family spends one: it is one request from that address,
 * whatever its fan-out (counting screens would refuse every takeover over more than 60 screens).
 */
export const SCREEN_CONTROL_PER_IP_PER_MINUTE = 60;

export function screenControlIpBudget(ip: string): RateBudget {
  return { name: 'screen-control-ip', limit: SCREEN_CONTROL_PER_IP_PER_MINUTE, windowSeconds: 60, key: ip };
}

export function projectBudget(family: BudgetFamily, tenantId: string, cost = 1): RateBudget {
  return { ...family.project, key: tenantId, cost };
}

export function screenBudget(family: BudgetFamily, screen: { id: string; tenant_id: string }): RateBudget {
  return { ...family.screen, key: `${screen.tenant_id}:${screen.id}` };
}

/** What one screen answers: its single-screen route's status and body, and its revision (ETag). */
export interface ScreenAnswer {
  status: number;
  body: unknown;
  revision: number;
  /**
   * Set when the body is this screen's public view (then `body` is not yet): the caller renders it
   * (viewsOf), so a fan-out renders the views of a group of screens with the reads of one.
   */
  view?: ScreenTable;
}

/** The request one screen's action runs under. */
export interface ActionRequest extends changes.ChangeRequest {
  services: Services;
}

/** The action with what was normalized once before a fan-out (entry ids, the takeover's end). */
export type PreparedAction =
  | Exclude<FleetAction, { type: 'set_playlist_schedule' | 'takeover' }>
  | { type: 'set_playlist_schedule'; entries: PlaylistScheduleEntry[] }
  | { type: 'takeover'; playlist_id: string; until: string; reason: string; untilMs: number };

/**
 * Validation that needs the request clock, done once per request (spec: the takeover's until is
 * checked once against the request clock; schedule entries are normalized once).
 */
export function prepareAction(action: FleetAction, now: number): PreparedAction {
  switch (action.type) {
    case 'set_playlist_schedule':
      return { type: action.type, entries: schedules.normalizeEntries(action.entries) };
    case 'takeover':
      return { ...action, untilMs: schedules.takeoverUntil(action.until, now) };
    default:
      return action;
  }
}

interface ActionEntry {
  family: BudgetFamily | null;
  /** Checks that refuse before any budget is spent (a screen with no player). */
  precheck?: (screen: ScreenTable) => void;
  run: (r: ActionRequest, screen: ScreenTable, action: PreparedAction) => Promise<ScreenAnswer>;
}

function screenAnswer(after: ScreenTable): ScreenAnswer {
  return { status: 200, body: undefined, view: after, revision: after.revision };
}

async function scheduleAnswer(r: ActionRequest, after: ScreenTable): Promise<ScreenAnswer> {
  return { status: 200, body: await scheduleView(r.work.db, after, r.now), revision: after.revision };
}

/** The action as its entry's type (the table is keyed by type, so the entry knows it). */
const of = <T extends FleetActionType>(action: PreparedAction, _type: T) =>
  action as Extract<PreparedAction, { type: T }>;

export const ACTIONS: Record<FleetActionType, ActionEntry> = {
  assign: {
    family: null,
    run: async (r, screen, action) =>
      screenAnswer(await changes.patchScreen(r, screen, { playlist_id: of(action, 'assign').playlist_id })),
  },
  reload: {
    family: BUDGETS.reload,
    precheck: changes.checkReloadable,
    run: async (r, screen) => ({
      status: 202,
      body: await changes.requestReload(r, screen),
      revision: screen.revision,
    }),
  },
  toast: {
    family: BUDGETS.toast,
    precheck: commands.checkToastable,
    run: async (r, screen, action) => {
      const { level, text, duration_ms } = of(action, 'toast');
      return {
        status: 202,
        body: await commands.showToast(r, screen, { level, text, duration_ms }),
        revision: screen.revision,
      };
    },
  },
  set_tags: {
    family: null,
    run: async (r, screen, action) =>
      screenAnswer(await schedules.editTags(r, screen, { set: of(action, 'set_tags').tags })),
  },
  add_tags: {
    family: null,
    run: async (r, screen, action) =>
      screenAnswer(await schedules.editTags(r, screen, { add: of(action, 'add_tags').tags })),
  },
  remove_tags: {
    family: null,
    run: async (r, screen, action) =>
      screenAnswer(await schedules.editTags(r, screen, { remove: of(action, 'remove_tags').tags })),
  },
  takeover: {
    family: BUDGETS.screenControl,
    run: async (r, screen, action) => {
      const t = of(action, 'takeover');
      return scheduleAnswer(r, await schedules.startTakeover(r, screen, t, t.untilMs));
    },
  },
  takeover_clear: {
    family: BUDGETS.screenControl,
    run: async (r, screen) => scheduleAnswer(r, await schedules.clearTakeover(r, screen)),
  },
  set_playlist_schedule: {
    family: BUDGETS.screenControl,
    run: async (r, screen, action) =>
      scheduleAnswer(r, await schedules.setPlaylistSchedule(r, screen, of(action, 'set_playlist_schedule').entries)),
  },
  clear_playlist_schedule: {
    family: BUDGETS.screenControl,
    run: async (r, screen) => scheduleAnswer(r, await schedules.setPlaylistSchedule(r, screen, [])),
  },
  reboot: {
    family: BUDGETS.reboot,
    precheck: commands.checkRebootable,
    run: async (r, screen) => ({
      status: 202,
      body: await commands.requestReboot(r, screen),
      revision: screen.revision,
    }),
  },
  display: {
    family: BUDGETS.display,
    run: async (r, screen, action) => ({
      status: 200,
      body: await commands.setDisplayPower(r, screen, of(action, 'display').power),
      revision: screen.revision,
    }),
  },
  display_clear: {
    family: BUDGETS.display,
    run: async (r, screen) => ({
      status: 200,
      body: await commands.clearDisplayPower(r, screen),
      revision: screen.revision,
    }),
  },
  set_display_schedule: {
    family: BUDGETS.display,
    run: async (r, screen, action) => ({
      status: 200,
      body: await commands.setDisplaySchedule(r, screen, { on: of(action, 'set_display_schedule').on }),
      revision: screen.revision,
    }),
  },
  /** A PATCH of sync_group: leaving the group leaves its wall too; a region is kept while in a group. */
  set_sync_group: {
    family: null,
    run: async (r, screen, action) =>
      screenAnswer(await changes.patchScreen(r, screen, { sync_group: of(action, 'set_sync_group').sync_group })),
  },
  clear_display_schedule: {
    family: BUDGETS.display,
    run: async (r, screen) => ({
      status: 200,
      body: await commands.clearDisplaySchedule(r, screen),
      revision: screen.revision,
    }),
  },
};

/** The schedule view: entries, the effective playlist and why, the next boundary, the takeover. */
export async function scheduleView(db: Db | Tx, screen: ScreenTable, now: number): Promise<ScreenPlaylistScheduleView> {
  // A screen a change of this request returned was resolved and its boundary written at `now`.
  const known = resolvedOf(screen);
  const fresh = known?.at === now && screen.state !== 'deleted' ? known : undefined;
  const schedule = fresh?.schedule ?? (await scheduleOf(db, screen.id));
  const takeover = schedule.takeover && schedule.takeover.until > now ? schedule.takeover : null;
  const resolution =
    fresh?.resolution ??
    resolveSchedule(
      {
        playlistId: screen.playlist_id,
        timezone: screen.timezone,
        entries: schedule.entries,
        takeover,
        unavailable: await unavailablePlaylists(db, screen.tenant_id, [
          ...schedule.entries.map((e) => e.playlist_id),
          ...(takeover ? [takeover.playlistId] : []),
        ]),
      },
      now,
    );
  const boundary = fresh ? fresh.resolution.nextBoundary : await boundaryOf(db, screen.id);
  return {
    entries: schedule.entries,
    updated_at: schedule.updatedAt === null ? null : isoTime(schedule.updatedAt),
    // An archived screen's glass is dark whatever its schedule says (it is re-resolved on unarchive).
    effective_playlist:
      screen.state === 'archived'
        ? { playlist_id: null, source: 'none' }
        : { playlist_id: screen.effective_playlist_id, source: resolution.effective.source },
    next_boundary_at: boundary === null ? null : isoTime(boundary),
    takeover: takeover
      ? { playlist_id: takeover.playlistId, until: isoTime(takeover.until), reason: takeover.reason }
      : null,
  };
}
