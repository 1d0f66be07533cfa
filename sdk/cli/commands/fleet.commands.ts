// Fleet control: tags, a screen's playlist schedule and takeover, toasts, display power, reboot, and
// one action over many screens (`screen actions`). Each single-screen command is one request.
import fs from 'node:fs/promises';
import {
  type DisplayState,
  FleetAction,
  type FleetSelector,
  type PlaylistScheduleEntryWrite,
  type ScreenActionItem,
  type ScreenActionResult,
  type ScreenPlaylistScheduleView,
  TOAST_DURATION_DEFAULT_MS,
  TOAST_DURATION_MAX_MS,
  TOAST_DURATION_MIN_MS,
} from '../../contract/fleet';
import type { Screen } from '../../contract/screens';
import { command, type CommandContext } from '../command';
import { CliFailure, exitCodeOfProblem, invalidInput, usage } from '../exit-codes';
import { fields, table, type Block } from '../output';

/** What an empty schedule means now: never that the assigned playlist plays while a takeover does. */
const NO_ENTRIES: Record<ScreenPlaylistScheduleView['effective_playlist']['source'], string> = {
  takeover: 'no schedule entries: the takeover plays until it ends',
  schedule: 'no schedule entries',
  assignment: 'no schedule entries: the assigned playlist plays',
  none: 'no schedule entries and no assigned playlist: nothing plays',
};

export function scheduleBlocks(view: ScreenPlaylistScheduleView): Block[] {
  return [
    fields(
      ['showing', view.effective_playlist.playlist_id ?? 'nothing'],
      ['because of', view.effective_playlist.source],
      ['next boundary', view.next_boundary_at ?? undefined],
      ['takeover', view.takeover ? `${view.takeover.playlist_id} until ${view.takeover.until}` : undefined],
      ['takeover reason', view.takeover?.reason],
    ),
    table(
      ['entry', 'playlist', 'rule'],
      view.entries.map((e) => [e.id, e.playlist_id, JSON.stringify(e.rule)]),
      NO_ENTRIES[view.effective_playlist.source],
    ),
  ];
}

type TagAction = Extract<FleetAction, { type: 'set_tags' | 'add_tags' | 'remove_tags' }>;

/** `screen tag`: each edit sent (adds before removes, or one set) with its outcome, and the tags after. */
export interface TagEdit {
  edits: (ScreenActionResult & { tags: string[] })[];
  /** The screen's tags after the last edit that went through; null when none did. */
  screen_tags: string[] | null;
}

function tagsAfter(edits: TagEdit['edits']): string[] | null {
  const done = edits.flatMap((e) => e.results).filter((r) => r.ok);
  return (done.at(-1)?.result as Screen | undefined)?.tags ?? null;
}

function outcomeOf(item: ScreenActionItem | undefined): string {
  if (!item) return 'no screen';
  return item.ok ? 'done' : String((item.problem as { detail?: string }).detail ?? item.problem.code);
}

export function tagBlocks(edit: TagEdit): Block[] {
  return [
    table(
      ['edit', 'tags', 'outcome'],
      edit.edits.map((e) => [e.action, e.tags.join(', ') || '(none)', outcomeOf(e.results[0])]),
    ),
    fields(['tags now', edit.screen_tags === null ? undefined : edit.screen_tags.join(', ') || '(none)']),
  ];
}

function displayBlocks(state: DisplayState): Block[] {
  return [
    fields(
      ['power', state.power ?? 'follows the schedule'],
      ['schedule', state.schedule ? JSON.stringify(state.schedule.on) : 'none (on)'],
    ),
  ];
}

function actionBlocks(result: ScreenActionResult): Block[] {
  return [
    table(
      ['screen', 'status', 'outcome'],
      result.results.map((r) => [r.screen_id, r.status, outcomeOf(r)]),
      'no screens selected',
    ),
    fields(['action', result.action], ['succeeded', result.succeeded], ['failed', result.failed]),
  ];
}

async function readJson(file: string, what: string): Promise<unknown> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (error) {
    throw invalidInput(`${file}: cannot read ${what} as JSON (${(error as Error).message})`);
  }
}

/** The fleet action types this CLI knows, from the contract, for `screen actions --help` (a newer server may know more). */
const ACTION_TYPES: readonly string[] = FleetAction.options.map((o) => o.shape.type.value);

const TOAST_MIN_SECONDS = TOAST_DURATION_MIN_MS / 1000;
const TOAST_MAX_SECONDS = TOAST_DURATION_MAX_MS / 1000;

/** `--until 90m`: a duration from now, so another time on every run. */
const UNTIL_DURATION = /^(\d+)([mhd])$/;

/** `2026-11-23T15:00:00Z`, or a duration from now: `90m`, `2h`, `1d`. */
export function untilOf(input: string, now: number): string {
  const duration = UNTIL_DURATION.exec(input);
  if (duration) {
    const unit = { m: 60_000, h: 3600_000, d: 86_400_000 }[duration[2] as 'm' | 'h' | 'd'];
    return new Date(now + Number(duration[1]) * unit).toISOString();
  }
  if (Number.isNaN(Date.parse(input)))
    throw invalidInput(`--until ${JSON.stringify(input)}: give an ISO time with offset or a duration such as 90m`);
  return input;
}

/** `--ids a,b` or `--tag lobby`: exactly one. */
function selectorOf(ctx: CommandContext): FleetSelector {
  const ids = ctx.options.ids as string[] | undefined;
  const tag = ctx.options.tag as string | undefined;
  if ((ids === undefined) === (tag === undefined)) throw usage('select screens with exactly one of --ids or --tag');
  return ids ? { ids } : { tag: tag! };
}

const selectorOptions = [
  { flags: '--ids <ids>', description: 'these screens: a,b,c (up to 500)', parse: 'list' as const },
  { flags: '--tag <tag>', description: 'every active screen with this tag (up to 500)' },
];

export const fleetCommands = [
  command({
    name: 'screen tag',
    summary: "add and remove a screen's tags (adds first), or replace them with --set",
    arguments: ['<screen-id>'],
    options: [
      { flags: '--add <tags>', description: 'tags to add: a,b', parse: 'list' },
      { flags: '--remove <tags>', description: 'tags to remove: a,b', parse: 'list' },
      { flags: '--set <tags>', description: 'replace the tags (empty string clears)', parse: 'list' },
    ],
    async run(ctx): Promise<TagEdit> {
      const ids = [ctx.args[0] as string];
      const { add, remove, set } = ctx.options as Record<string, string[] | undefined>;
      const actions: TagAction[] =
        set !== undefined
          ? [{ type: 'set_tags', tags: set }]
          : [
              ...(add?.length ? [{ type: 'add_tags' as const, tags: add }] : []),
              ...(remove?.length ? [{ type: 'remove_tags' as const, tags: remove }] : []),
            ];
      if (actions.length === 0) throw usage('give --add, --remove or --set');
      const client = await ctx.client();
      const edits: TagEdit['edits'] = [];
      for (const action of actions)
        edits.push({ ...(await client.screens.actions({ ids }, action)).data, tags: action.tags });
      const result = { edits, screen_tags: tagsAfter(edits) };
      // One screen: an edit it refused (no such screen, a tag over the limit) is the command's failure,
      // with that problem's exit code; the envelope's error keeps every edit's outcome.
      const refused = edits.flatMap((e) => e.results.flatMap((r) => (r.ok ? [] : [{ action: e.action, r }])));
      if (refused.length > 0) {
        const { status, problem } = refused[0]!.r as Extract<ScreenActionItem, { ok: false }>;
        const code = typeof problem.code === 'string' ? problem.code : 'invalid_request';
        const detail = refused.map(({ action, r }) => `${action}: ${outcomeOf(r)}`).join('; ');
        throw new CliFailure(exitCodeOfProblem(status, code), code, detail, { status, ...result });
      }
      return result;
    },
    human: tagBlocks,
    ids: (edit) => [...new Set(edit.edits.flatMap((e) => e.results.map((r) => r.screen_id)))],
  }),
  command({
    name: 'screen schedule',
    summary: "show a screen's playlist schedule, replace it from a JSON file, or clear it",
    description:
      'The file holds the entries in priority order: [{"id":"lunch","playlist_id":"pl_…","rule":{"enabled":true,"windows":[{"days":["mon"],"start":"11:30","end":"14:00"}]}}].',
    arguments: ['<screen-id>'],
    options: [
      { flags: '--file <entries.json>', description: 'replace the schedule with these entries' },
      { flags: '--clear', description: 'remove every entry (the assigned playlist plays)' },
    ],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      const client = await ctx.client();
      const file = ctx.options.file as string | undefined;
      if (file && ctx.options.clear) throw usage('give --file or --clear, not both');
      if (ctx.options.clear) return (await client.screens.setPlaylistSchedule(id, [], ctx.guarded())).data;
      if (!file) return (await client.screens.playlistSchedule(id)).data;
      const entries = await readJson(file, 'schedule entries');
      if (!Array.isArray(entries)) throw invalidInput(`${file}: expected a JSON array of entries`);
      return (await client.screens.setPlaylistSchedule(id, entries as PlaylistScheduleEntryWrite[], ctx.guarded()))
        .data;
    },
    human: scheduleBlocks,
    ids: () => [],
  }),
  command({
    name: 'screen takeover',
    summary: 'show a playlist on a screen over its schedule until a time (or --clear to end it)',
    arguments: ['<screen-id>', '[playlist-id]'],
    options: [
      { flags: '--until <time>', description: 'when it ends: ISO time or a duration such as 90m, 2h' },
      { flags: '--reason <text>', description: 'why (shown in events)' },
      { flags: '--clear', description: 'end the takeover now' },
    ],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      const playlist = ctx.args[1] as string | undefined;
      const { until, reason } = ctx.options as Record<string, string | undefined>;
      if (ctx.options.clear) {
        // Both at once is a mistake either way: never end a takeover the caller meant to start.
        if (playlist !== undefined || until !== undefined || reason !== undefined)
          throw usage('--clear ends the takeover: give it no <playlist-id>, --until or --reason');
        return (await (await ctx.client()).screens.clearTakeover(id, ctx.guarded())).data;
      }
      if (!playlist || !until || !reason) throw usage('give <playlist-id>, --until and --reason (or --clear)');
      // The repeat of an attempt would send another end, which the server refuses as another request.
      if (ctx.options.idempotencyKey !== undefined && UNTIL_DURATION.test(until))
        throw usage(
          `--until ${until} is a new time on every run, so repeating this takeover with --idempotency-key would be refused (idempotency_mismatch): give the end as an ISO time with offset`,
        );
      const body = { playlist_id: playlist, until: untilOf(until, Date.now()), reason };
      return (await (await ctx.client()).screens.takeover(id, body, ctx.guarded())).data;
    },
    human: scheduleBlocks,
    ids: () => [],
  }),
  command({
    name: 'screen toast',
    summary: 'show a short message over the content (≤ 120 characters, ≤ 3 lines)',
    arguments: ['<screen-id>', '<text>'],
    options: [
      { flags: '--level <level>', description: 'how it looks', choices: ['info', 'alert', 'error'], default: 'info' },
      {
        flags: '--seconds <n>',
        description: `how long it shows (${TOAST_MIN_SECONDS} to ${TOAST_MAX_SECONDS}, default ${TOAST_DURATION_DEFAULT_MS / 1000})`,
        parse: 'positive-int',
      },
    ],
    idempotencyKeyOption: true,
    async run(ctx) {
      const seconds = ctx.options.seconds as number | undefined;
      // Said here in the flag's own unit: the server's refusal names duration_ms in milliseconds.
      if (seconds !== undefined && (seconds < TOAST_MIN_SECONDS || seconds > TOAST_MAX_SECONDS))
        throw usage(`--seconds is from ${TOAST_MIN_SECONDS} to ${TOAST_MAX_SECONDS}`);
      const body = {
        level: ctx.options.level as 'info' | 'alert' | 'error',
        text: (ctx.args[1] as string).replace(/\\n/g, '\n'),
        ...(seconds !== undefined ? { duration_ms: seconds * 1000 } : {}),
      };
      return (await (await ctx.client()).screens.toast(ctx.args[0] as string, body, ctx.call())).data;
    },
    human: (r) => [fields(['toast', r.toast_id], ['expires', r.expires_at])],
    ids: (r) => [r.toast_id],
  }),
  command({
    name: 'screen display',
    summary: "turn a screen's display on or off, or auto to follow its display schedule",
    arguments: ['<screen-id>', '<on|off|auto>'],
    options: [
      { flags: '--schedule <file>', description: 'also set the weekly schedule: {"on":[windows]} (none clears)' },
    ],
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      const power = ctx.args[1] as string;
      if (!['on', 'off', 'auto'].includes(power)) throw usage('the display is on, off or auto');
      const client = await ctx.client();
      const file = ctx.options.schedule as string | undefined;
      if (file !== undefined) {
        const schedule = file === 'none' ? null : ((await readJson(file, 'a display schedule')) as never);
        await client.screens.displaySchedule(id, schedule, ctx.call());
      }
      return (await client.screens.display(id, power === 'auto' ? null : (power as 'on' | 'off'), ctx.call())).data;
    },
    human: displayBlocks,
    ids: () => [],
  }),
  command({
    name: 'screen reboot',
    summary: 'reboot the box (a kiosk) or reload the player (a browser); twice per ten minutes at most',
    arguments: ['<screen-id>'],
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      return { screen_id: id, ...(await (await ctx.client()).screens.reboot(id, ctx.call())).data };
    },
    human: (r) => [fields(['screen', r.screen_id], ['reboot', r.reboot_id], ['expires', r.expires_at])],
    ids: (r) => [r.reboot_id],
  }),
  command({
    name: 'screen actions',
    summary: 'one action over many screens (--ids or --tag): takeover, toast, display, reboot, …',
    description: `The action is <type> plus the members in --file (JSON), e.g. takeover with {"playlist_id":"pl_…","until":"…","reason":"…"}. A retry with the same --idempotency-key replays finished screens.\nTypes: ${ACTION_TYPES.join(', ')}.\nExit 0 once the server has answered, even when some screens failed: read failed and each result's ok.`,
    arguments: ['<type>'],
    options: [...selectorOptions, { flags: '--file <action.json>', description: "the action's other members" }],
    idempotencyKeyOption: true,
    async run(ctx) {
      const selector = selectorOf(ctx);
      const file = ctx.options.file as string | undefined;
      const members = file ? await readJson(file, 'the action') : {};
      if (typeof members !== 'object' || members === null || Array.isArray(members))
        throw invalidInput(`${file}: expected a JSON object`);
      const action = { ...members, type: ctx.args[0] as string } as FleetAction;
      return (await (await ctx.client()).screens.actions(selector, action, ctx.call())).data;
    },
    human: actionBlocks,
    ids: (r) => r.results.map((x) => x.screen_id),
  }),
];
