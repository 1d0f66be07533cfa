// Playlists from JSON files (the document `PUT` takes; see sdk/contract/playlist.ts), a quick
// one-page-per-media form for the common case, and folder bundles that carry their media along.
import fs from 'node:fs/promises';
import type { MarqueeClient, PlaylistDocument } from '../../client/marquee-client';
import type { Media } from '../../contract/media';
import type { Page, Playlist, PlaylistList } from '../../contract/playlist';
import { command, type CommandContext } from '../command';
import { invalidInput, usage } from '../exit-codes';
import { fields, lines, table, type Block } from '../output';
import type { ImportedMedia } from '../playlist-bundle';

/** The bundle code validates its manifest with a schema: loaded only by export and import. */
const bundles = () => import('../playlist-bundle');

/** The canvas of the quick form: full HD, black, letterboxed on any screen. */
const QUICK_CANVAS = { width: 1920, height: 1080, viewport_fit: 'contain', background: '#000000FF' } as const;
const QUICK_TRANSITION = { type: 'crossfade', duration_ms: 500 } as const;
/** How long an image page of the quick form stays, unless --seconds says otherwise. */
const QUICK_IMAGE_SECONDS = 10;

/** A JSON document from a file, or from stdin with `-`. */
async function readDocument(file: string): Promise<PlaylistDocument> {
  let text: string;
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      text = Buffer.concat(chunks).toString('utf8');
    } else text = await fs.readFile(file, 'utf8');
  } catch {
    throw invalidInput(`cannot read ${file}`);
  }
  try {
    return JSON.parse(text) as PlaylistDocument;
  } catch (error) {
    throw invalidInput(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

function mediaPage(
  id: string,
  kind: 'image' | 'video',
  selector: object,
  seconds: number,
): PlaylistDocument['pages'][number] {
  const content =
    kind === 'image'
      ? { type: 'image' as const, selector }
      : { type: 'video' as const, selector, muted: true as const, loop: false };
  return {
    id,
    canvas: QUICK_CANVAS,
    transition: QUICK_TRANSITION,
    advance: kind === 'image' ? { mode: 'duration', after_ms: seconds * 1000 } : { mode: 'media_end' },
    placements: [
      {
        id: 'media',
        content,
        rect: { x: 0, y: 0, width: QUICK_CANVAS.width, height: QUICK_CANVAS.height },
        layer: 0,
        content_fit: 'contain',
      },
    ],
  } as PlaylistDocument['pages'][number];
}

/**
 * The quick form: one full-screen page per media id (images for --seconds, videos to their end),
 * and per kind of media carrying --media-tag one page that shows them one at a time.
 */
async function quickDocument(client: MarqueeClient, ctx: CommandContext): Promise<PlaylistDocument> {
  const name = ctx.options.name as string | undefined;
  if (!name) throw usage('name the playlist with --name (or give a JSON file)');
  const seconds = (ctx.options.seconds as number | undefined) ?? QUICK_IMAGE_SECONDS;
  const pages: PlaylistDocument['pages'] = [];
  for (const id of (ctx.options.media as string[] | undefined) ?? []) {
    const media = (await client.media.get(id)).data;
    if (media.kind === 'audio') throw invalidInput(`${id} is audio; a page shows images and video`);
    pages.push(mediaPage(`page${pages.length + 1}`, media.kind, { by: 'id', media_id: id }, seconds));
  }
  const tag = ctx.options.mediaTag as string | undefined;
  if (tag !== undefined) {
    const tagged: Media[] = (await client.media.list({ tag, limit: 100 })).data.items;
    const kinds = (['image', 'video'] as const).filter((kind) => tagged.some((m) => m.kind === kind));
    if (kinds.length === 0) throw invalidInput(`no image or video carries the tag ${tag} yet`);
    for (const kind of kinds) pages.push(mediaPage(`${kind}s`, kind, { by: 'tag', tag, one_at_a_time: true }, seconds));
  }
  if (pages.length === 0) throw usage('give a JSON file, or --media <media-id> / --media-tag <tag>');
  return { name, pages };
}

function advanceText(page: Page): string {
  const advance = page.advance;
  if (advance.mode === 'duration') return `${advance.after_ms / 1000} s`;
  if (advance.mode === 'application') return `application (max ${advance.max_ms / 1000} s)`;
  return `media end (max ${advance.max_ms / 1000} s)`;
}

function placementText(page: Page): string {
  return page.placements
    .map((p) => {
      const c = p.content;
      if (c.type === 'iframe') return `iframe ${c.src}`;
      if (c.type === 'application') return `application ${c.release_id}`;
      const by =
        c.selector.by === 'id'
          ? c.selector.media_id
          : c.selector.by === 'tag'
            ? `tag ${c.selector.tag}`
            : c.selector.by;
      return `${c.type} ${by} (${c.items.length})`;
    })
    .join(', ');
}

function playlistBlocks(playlist: Playlist): Block[] {
  return [
    fields(
      ['id', playlist.id],
      ['name', playlist.name],
      ['revision', playlist.revision],
      ['soundtrack', playlist.audio ? `${playlist.audio.tracks.length} tracks` : undefined],
    ),
    table(
      ['page', 'advance', 'transition', 'visibility', 'placements'],
      playlist.pages.map((page) => [
        page.id,
        advanceText(page),
        page.transition ? `${page.transition.type} ${page.transition.duration_ms} ms` : undefined,
        page.visibility ? (page.visibility.enabled ? 'scheduled' : 'hidden') : 'always',
        placementText(page),
      ]),
    ),
  ];
}

const V2_OPTION = { flags: '--v2', description: 'the /api/v2 routes (documents with adslot pages)' };

function routes(client: MarqueeClient, ctx: CommandContext) {
  return ctx.options.v2 ? client.playlists.v2 : client.playlists;
}

export const playlistCommands = [
  command({
    name: 'playlist create',
    summary: 'create a playlist from a JSON file (- for stdin), or one full-screen page per media',
    arguments: ['[file]'],
    options: [
      { flags: '--name <name>', description: 'the name (quick form; overrides the file’s)' },
      { flags: '--media <media-id>', description: 'a page showing this media (repeat for more)', repeatable: true },
      { flags: '--media-tag <tag>', description: 'a page showing the media with this tag, one at a time' },
      {
        flags: '--seconds <n>',
        description: `how long an image page stays (default ${QUICK_IMAGE_SECONDS})`,
        parse: 'positive-int',
      },
      V2_OPTION,
    ],
    idempotencyKeyOption: true,
    async run(ctx) {
      const client = await ctx.client();
      const file = ctx.args[0] as string | undefined;
      let document: PlaylistDocument;
      if (file !== undefined) {
        // The quick form's options make the pages; with a file they would be dropped unsaid.
        if (['media', 'mediaTag', 'seconds'].some((option) => ctx.options[option] !== undefined))
          throw usage('--media, --media-tag and --seconds make the pages without a file: give a file or those');
        document = await readDocument(file);
        if (ctx.options.name !== undefined) document = { ...document, name: ctx.options.name as string };
      } else document = await quickDocument(client, ctx);
      return (await routes(client, ctx).create(document as never, ctx.call())).data as Playlist;
    },
    human: playlistBlocks,
    ids: (p) => [p.id],
  }),
  command({
    name: 'playlist update',
    summary: 'replace a playlist with the document in a JSON file (revision + 1)',
    description:
      "The file is a write document (sdk/contract/playlist.ts), such as `playlist export`'s playlist.json. What\n`playlist show --json` prints is not one: the server refuses its response-only members (id, revision, a\nplacement's resolved items and controller, page comments).",
    arguments: ['<playlist-id>', '<file>'],
    options: [V2_OPTION],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const client = await ctx.client();
      const document = await readDocument(ctx.args[1] as string);
      return (await routes(client, ctx).replace(ctx.args[0] as string, document as never, ctx.guarded()))
        .data as Playlist;
    },
    human: playlistBlocks,
    ids: (p) => [p.id],
  }),
  command({
    name: 'playlist show',
    summary: 'show a playlist and its pages (--json for the whole document)',
    arguments: ['<playlist-id>'],
    options: [V2_OPTION],
    async run(ctx) {
      return (await routes(await ctx.client(), ctx).get(ctx.args[0] as string)).data as Playlist;
    },
    human: playlistBlocks,
    ids: (p) => [p.id],
  }),
  command({
    name: 'playlist list',
    summary: 'list playlists',
    options: [V2_OPTION],
    async run(ctx) {
      return (await routes(await ctx.client(), ctx).list()).data as PlaylistList;
    },
    human: (list) => [
      table(
        ['id', 'revision', 'pages', 'name'],
        list.items.map((p) => [p.id, p.revision, p.pages.length, p.name]),
        'no playlists yet (marquee playlist create)',
      ),
    ],
    ids: (list) => list.items.map((p) => p.id),
  }),
  command({
    name: 'playlist delete',
    summary: 'delete a playlist (refused while a screen refers to it)',
    arguments: ['<playlist-id>'],
    options: [V2_OPTION],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      await routes(await ctx.client(), ctx).delete(id, ctx.guarded());
      return { id, deleted: true };
    },
    human: (r) => [lines(`deleted ${r.id}`)],
    ids: (r) => [r.id],
  }),
  command({
    name: 'playlist export',
    summary: 'write a playlist and the media it shows to a new folder (playlist.json, media.json, media/)',
    arguments: ['<playlist-id>', '<folder>'],
    async run(ctx) {
      const client = await ctx.client();
      const progress = ctx.progress('export');
      try {
        const exported = await (await bundles()).exportBundle(
          client,
          ctx.apiUrl,
          ctx.args[0] as string,
          ctx.args[1] as string,
          ctx.signal,
          progress,
        );
        return { folder: exported.directory, name: exported.playlist.name, media: exported.manifest.media };
      } finally {
        progress.done();
      }
    },
    human: (r) => [
      fields(['folder', r.folder], ['playlist', r.name], ['media', `${r.media.length} files`]),
      table(
        ['media', 'file', 'type', 'bytes'],
        r.media.map((m) => [m.media_id, m.file, m.content_type, m.bytes]),
      ),
    ],
    ids: (r) => [r.folder],
  }),
  command({
    name: 'playlist import',
    summary: 'create a playlist from an exported folder, uploading its media (or reusing identical ones)',
    arguments: ['<folder>'],
    options: [
      { flags: '--name <name>', description: 'name the new playlist (default: the exported name)' },
      { flags: '--replace <playlist-id>', description: 'replace this playlist instead of creating one' },
    ],
    ifMatch: true,
    async run(ctx) {
      const client = await ctx.client();
      const folder = ctx.args[0] as string;
      const replace = ctx.options.replace as string | undefined;
      if (ctx.options.ifMatch !== undefined && replace === undefined) throw usage('--if-match goes with --replace');
      const { readBundle, importBundleMedia } = await bundles();
      const bundle = await readBundle(folder);
      const { document, media } = await importBundleMedia(
        client,
        folder,
        bundle.manifest,
        bundle.document,
        ctx.signal,
        ctx.progress,
      );
      const named = ctx.options.name === undefined ? document : { ...document, name: ctx.options.name as string };
      const playlist = replace
        ? (await client.playlists.replace(replace, named, ctx.guarded())).data
        : (await client.playlists.create(named, ctx.call())).data;
      return { playlist, media };
    },
    human: (r: { playlist: Playlist; media: ImportedMedia[] }) => [
      ...playlistBlocks(r.playlist),
      table(
        ['exported media', 'imported as', 'how'],
        r.media.map((m) => [m.from, m.to, m.uploaded ? 'uploaded' : 'already there']),
      ),
    ],
    ids: (r) => [r.playlist.id],
  }),
];
