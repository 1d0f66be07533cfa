// Screens: pair the code a player shows (or provision a link), list, show, update, assign a
// playlist, archive, unarchive, delete, rotate the public id, reload the player. Fleet control
// (tags, schedule, takeover, toast, display, reboot, actions) is in fleet.commands.ts.
import type {
  Screen,
  ScreenList,
  ScreenPatch,
  ScreenReloadAccepted,
  ScreenState,
  WallRegion,
} from '../../contract/screens';
import { command, type CommandContext, type CommandSpec } from '../command';
import { CliFailure, EXIT, invalidInput, usage } from '../exit-codes';
import { writeVerified } from '../verified-file';
import { fields, formatBytes, lines, table, type Block, type Value } from '../output';

function screenFields(screen: Screen): Block {
  return fields(
    ['id', screen.id],
    ['label', screen.label],
    ['state', screen.state],
    ['online', screen.online],
    ['last online', screen.last_online_at],
    ['playlist', screen.playlist_id],
    ['timezone', screen.timezone],
    ['tags', screen.tags.length > 0 ? screen.tags.join(', ') : undefined],
    ['sync group', screen.sync_group],
    ['wall region', screen.wall_region ? regionText(screen.wall_region) : undefined],
    ['revision', screen.revision],
    ['manifest revision', screen.manifest_revision],
    ['public id', screen.public_id],
    ['created', screen.created_at],
    ...healthFields(screen),
  );
}

/** Is it alive, and what is on it: the screen view's health, for `screen show`. */
function healthFields(screen: Screen): [string, Value][] {
  const h = screen.health;
  if (!h) return [];
  const surface = screen.observation?.surfaces[0];
  const shot = h.screenshot;
  return [
    ['presence', presenceText(screen)],
    ['last seen', h.last_seen_at],
    ['offline since', h.offline_since],
    ['player', h.player ? `${h.player.kind}${h.player.version ? ` ${h.player.version}` : ''}` : undefined],
    [
      'host',
      h.host
        ? [h.host.manufacturer, h.host.model, h.host.platform, h.host.firmware].filter(Boolean).join(' ')
        : undefined,
    ],
    [
      'surface',
      surface ? `${surface.width}×${surface.height} @${surface.pixel_ratio}x ${surface.presentation}` : undefined,
    ],
    [
      'now playing',
      h.now_playing ? `${h.now_playing.playlist_id ?? '-'} (${h.now_playing.manifest_revision})` : undefined,
    ],
    ['last activation', h.now_playing?.activated_at],
    [
      'watchdog',
      h.watchdog.recoveries > 0
        ? `${h.watchdog.recoveries} recoveries, last ${h.watchdog.last_recovery_at} (${h.watchdog.last_reason})`
        : undefined,
    ],
    [
      'screenshot',
      shot.state === 'idle'
        ? undefined
        : `${shot.state}${shot.captured_at ? `, last ${shot.width}×${shot.height} at ${shot.captured_at} (${shot.method})` : ''}`,
    ],
  ];
}

/** online/offline as the list shows it: live presence, with the announced state when it differs. */
function presenceText(screen: Screen): string {
  if (screen.online) return 'online';
  return screen.health?.offline_since ? `offline since ${screen.health.offline_since}` : 'offline';
}

const regionText = (r: WallRegion) => `${r.x},${r.y},${r.width},${r.height}`;

/**
 * `--wall-region 1920,0,1920,1080` → the region (x, y, width, height in canvas pixels); `none`
 * clears it. The server checks the ranges and that the screen has a sync group.
 */
export function parseWallRegion(input: string): WallRegion | null {
  if (input === 'none') return null;
  const parts = input.split(',').map((part) => part.trim());
  const numbers = parts.map(Number);
  if (parts.length !== 4 || parts.some((part) => part === '') || numbers.some((n) => !Number.isFinite(n)))
    throw invalidInput(
      `${JSON.stringify(input)} is not a wall region: four numbers x,y,width,height in canvas pixels, like 1920,0,1920,1080 (or none)`,
    );
  const [x, y, width, height] = numbers as [number, number, number, number];
  return { x, y, width, height };
}

/** `K7Q-X2M`, `k7q x2m` → `K7QX2M`: the code as the player shows it, read by a person. */
export async function normalizePairingCode(input: string): Promise<string> {
  // The contract module brings its schemas; loaded only when a code is paired.
  const { PAIRING_CODE_PATTERN } = await import('../../contract/screens');
  const code = input.replace(/[\s-]/g, '').toUpperCase();
  if (!PAIRING_CODE_PATTERN.test(code))
    throw invalidInput(
      `${JSON.stringify(input)} is not a pairing code: six characters as the screen shows them, like K7Q-X2M`,
    );
  return code;
}

/** `screen archive <id>` and its siblings: one POST that answers the screen. */
function transition(
  name: string,
  summary: string,
  call: (ctx: CommandContext, id: string) => Promise<{ data: Screen }>,
): CommandSpec<Screen> {
  return command({
    name: `screen ${name}`,
    summary,
    arguments: ['<screen-id>'],
    ifMatch: true,
    idempotencyKeyOption: true,
    run: async (ctx) => (await call(ctx, ctx.args[0] as string)).data,
    human: (screen) => [screenFields(screen)],
    ids: (screen) => [screen.id],
  });
}

export const screenCommands = [
  command({
    name: 'screen pair',
    summary: 'claim the six-character code a player shows; the screen starts at once',
    arguments: ['<code>'],
    options: [
      { flags: '--label <label>', description: 'what to call the screen' },
      { flags: '--playlist <playlist-id>', description: 'assign this playlist straight away' },
    ],
    idempotencyKeyOption: true,
    async run(ctx) {
      const code = await normalizePairingCode(ctx.args[0] as string);
      const client = await ctx.client();
      const label = ctx.options.label as string | undefined;
      const claim = (await client.screens.pair(label === undefined ? { code } : { code, label }, ctx.call())).data;
      const playlistId = ctx.options.playlist as string | undefined;
      if (playlistId === undefined) return claim;
      // Not guarded by the revision pairing answered: the player completing pairing bumps it at
      // once, and the PATCH names only playlist_id, so it cannot undo anything else.
      const assigned = await client.screens.assign(claim.screen.id, playlistId, {
        signal: ctx.signal,
      });
      return { ...claim, screen: assigned.data };
    },
    human: (claim) => [screenFields(claim.screen), fields(['public URL', claim.public_url])],
    ids: (claim) => [claim.screen.id],
  }),
  command({
    name: 'screen provision',
    summary: 'create a screen and a one-time link that pairs the browser that opens it',
    description: 'The provisioning URL is a credential: open it on the screen, do not share it.',
    options: [{ flags: '--label <label>', description: 'what to call the screen' }],
    idempotencyKeyOption: true,
    async run(ctx) {
      const client = await ctx.client();
      const label = ctx.options.label as string | undefined;
      return (await client.screens.provision(label === undefined ? {} : { label }, ctx.call())).data;
    },
    human: (p) => [
      screenFields(p.screen),
      fields(['public URL', p.public_url], ['open on the screen', p.provisioning_url], ['link expires', p.expires_at]),
    ],
    // The link is shown once (a retry redelivers it only with the same --idempotency-key): -q prints
    // it after the id rather than lose it.
    ids: (p) => [p.screen.id, p.provisioning_url],
  }),
  command({
    name: 'screen link',
    summary: 'claim the setup code a browser shows at <play origin>/setup; it then provisions itself',
    description:
      'For a TV whose browser cannot run the pairing screen: open /setup on the player origin there, press the button,\nand give the code shown here. `ABC-234` and `abc234` are the same code.',
    arguments: ['<code>'],
    options: [{ flags: '--label <label>', description: 'what to call the screen' }],
    idempotencyKeyOption: true,
    async run(ctx) {
      const client = await ctx.client();
      const label = ctx.options.label as string | undefined;
      const code = ctx.args[0] as string;
      return (await client.screens.claimBrowserLink(label === undefined ? { code } : { code, label }, ctx.call())).data;
    },
    human: (c) => [
      fields(
        ['screen', c.screen.id],
        ['state', c.screen.state],
        ['public URL', c.screen.public_url],
        ['next', 'the browser moves on to the player by itself'],
      ),
    ],
    ids: (c) => [c.screen.id],
  }),
  command({
    name: 'screen list',
    summary: 'list screens (pairing and active; --archived for archived ones)',
    options: [
      { flags: '--archived', description: 'only archived screens' },
      { flags: '--state <state>', description: 'only this state', choices: ['pairing_pending', 'active', 'archived'] },
      { flags: '--tag <tag>', description: 'only screens with this tag' },
    ],
    async run(ctx): Promise<ScreenList> {
      if (ctx.options.archived && ctx.options.state !== undefined) throw usage('give --archived or --state, not both');
      const client = await ctx.client();
      const state = (ctx.options.archived ? 'archived' : ctx.options.state) as ScreenState | undefined;
      return (await client.screens.list({ state, tag: ctx.options.tag as string | undefined })).data;
    },
    human: (list) => [
      table(
        // What is on glass is what the player last reported; the assignment is shown apart (a takeover
        // or a schedule entry may be playing instead).
        ['id', 'state', 'online', 'last seen', 'player', 'now playing', 'assigned', 'revision', 'label'],
        list.items.map((s) => [
          s.id,
          s.state,
          s.online,
          s.online ? 'now' : s.health?.last_seen_at,
          s.health?.player?.kind,
          s.health?.now_playing?.playlist_id ?? undefined,
          s.playlist_id,
          s.revision,
          s.label,
        ]),
        'no screens (pair one: marquee screen pair <code>)',
      ),
    ],
    ids: (list) => list.items.map((s) => s.id),
  }),
  command({
    name: 'screen show',
    summary: 'show a screen',
    arguments: ['<screen-id>'],
    async run(ctx) {
      return (await (await ctx.client()).screens.get(ctx.args[0] as string)).data;
    },
    human: (screen) => [screenFields(screen)],
    ids: (screen) => [screen.id],
  }),
  command({
    name: 'screen screenshot',
    summary: "capture what a screen shows now, as a WebP still (waits for the player's answer)",
    arguments: ['<screen-id>'],
    options: [
      { flags: '-o, --output <file>', description: 'where to write it (default: <screen-id>-<capture-id>.webp here)' },
      { flags: '--out <file>', description: 'the same as --output (its first name)' },
      {
        flags: '--timeout <seconds>',
        description: 'how long to wait for the player (default 35)',
        parse: 'positive-int',
      },
    ],
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      const client = await ctx.client();
      const { capture_id } = (await client.screens.requestScreenshot(id, ctx.call())).data;
      const seconds = ctx.options.timeout as number | undefined;
      const waited = await client.screens.awaitScreenshot(id, capture_id, {
        signal: ctx.signal,
        ...(seconds !== undefined ? { timeoutMs: seconds * 1000 } : {}),
      });
      if (waited.outcome === 'replaced')
        throw new CliFailure(
          EXIT.conflict,
          'resource_conflict',
          `a later request (${waited.status.capture_id}) replaced ${capture_id}`,
        );
      if (waited.outcome === 'timed_out')
        throw new CliFailure(
          EXIT.timeout,
          'screenshot_timed_out',
          waited.status.reason ?? 'no player answered in time',
        );
      if (waited.outcome === 'still_pending')
        throw new CliFailure(EXIT.timeout, 'screenshot_pending', `the player has not answered ${capture_id} yet`);
      const image = await client.screens.screenshotImage(id, { captureId: capture_id, signal: ctx.signal });
      if (!image.body) throw new CliFailure(EXIT.unexpected, 'unexpected_response', 'the screenshot had no body');
      const file =
        (ctx.options.output as string | undefined) ??
        (ctx.options.out as string | undefined) ??
        `${id}-${capture_id}.webp`;
      // The bytes must be the ones the status named (reference CLI: length and SHA-256).
      const written = await writeVerified(image.body, file, waited.status.sha256, ctx.signal);
      const { width, height, method, captured_at } = waited.status;
      return {
        screen_id: id,
        capture_id,
        file,
        bytes: written.bytes,
        sha256: written.sha256,
        width,
        height,
        method,
        captured_at,
      };
    },
    human: (r) => [
      fields(
        ['screenshot', r.capture_id],
        ['file', r.file],
        ['size', `${r.width}×${r.height}, ${formatBytes(r.bytes)}`],
        ['method', r.method],
        ['captured', r.captured_at],
      ),
    ],
    ids: (r) => [r.file],
  }),
  command({
    name: 'screen update',
    summary: "change a screen's label, playlist, timezone, tags, sync group or wall region",
    arguments: ['<screen-id>'],
    options: [
      { flags: '--label <label>', description: 'the new label' },
      { flags: '--playlist <playlist-id>', description: 'assign this playlist (none to unassign)' },
      { flags: '--timezone <zone>', description: 'IANA time zone, e.g. Europe/Berlin (page visibility needs one)' },
      { flags: '--tags <tags>', description: 'replace the tags: a,b,c (empty string clears)', parse: 'list' },
      {
        flags: '--sync-group <group>',
        description: 'play in lockstep with the screens of this group showing the same playlist (none to leave)',
      },
      {
        flags: '--wall-region <x,y,width,height>',
        description: 'on a video wall, show only this part of the canvas (needs a sync group; none to clear)',
      },
    ],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const patch: ScreenPatch = {};
      const { label, playlist, timezone, tags, syncGroup, wallRegion } = ctx.options as Record<
        string,
        string | string[] | undefined
      >;
      if (label !== undefined) patch.name = label as string;
      if (playlist !== undefined) patch.playlist_id = playlist === 'none' ? null : (playlist as string);
      if (timezone !== undefined) patch.timezone = timezone as string;
      if (tags !== undefined) patch.tags = tags as string[];
      if (syncGroup !== undefined) patch.sync_group = syncGroup === 'none' ? null : (syncGroup as string);
      if (wallRegion !== undefined) patch.wall_region = parseWallRegion(wallRegion as string);
      if (Object.keys(patch).length === 0)
        throw usage('change something: --label, --playlist, --timezone, --tags, --sync-group or --wall-region');
      return (await (await ctx.client()).screens.update(ctx.args[0] as string, patch, ctx.guarded())).data;
    },
    human: (screen) => [screenFields(screen)],
    ids: (screen) => [screen.id],
  }),
  command({
    name: 'screen assign',
    summary: 'show a playlist on a screen (none to unassign)',
    arguments: ['<screen-id>', '<playlist-id>'],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const playlist = ctx.args[1] as string;
      const client = await ctx.client();
      return (await client.screens.assign(ctx.args[0] as string, playlist === 'none' ? null : playlist, ctx.guarded()))
        .data;
    },
    human: (screen) => [screenFields(screen)],
    ids: (screen) => [screen.id],
  }),
  transition('archive', 'archive a screen: hidden from the list, its glass dark, its quota freed', async (ctx, id) =>
    (await ctx.client()).screens.archive(id, ctx.guarded()),
  ),
  transition('unarchive', 'bring an archived screen back', async (ctx, id) =>
    (await ctx.client()).screens.unarchive(id, ctx.guarded()),
  ),
  transition(
    'rotate',
    'give a screen a new public id (its public URL changes; the paired player stays)',
    async (ctx, id) => (await ctx.client()).screens.rotatePublicId(id, ctx.guarded()),
  ),
  command({
    name: 'screen delete',
    summary: 'delete a screen: its player stops and is unpaired',
    arguments: ['<screen-id>'],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      await (await ctx.client()).screens.delete(id, ctx.guarded());
      return { id, deleted: true };
    },
    human: (r) => [lines(`deleted ${r.id}`)],
    ids: (r) => [r.id],
  }),
  command({
    name: 'screen reload',
    summary: 'tell the player to reload (it acts at most once per ten minutes)',
    arguments: ['<screen-id>'],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx): Promise<ScreenReloadAccepted & { screen_id: string }> {
      const id = ctx.args[0] as string;
      const accepted = (await (await ctx.client()).screens.reload(id, ctx.guarded())).data;
      return { screen_id: id, ...accepted };
    },
    human: (r) => [fields(['screen', r.screen_id], ['reload', r.reload_id], ['expires', r.expires_at])],
    ids: (r) => [r.reload_id],
  }),
];
