// Publishes a small lobby loop with the typed client: packs and uploads the kv-counter app, uploads
// an image, creates a playlist of both and prints it; with --pair it also pairs a screen and
// assigns the playlist to it.
//
//   npm run build:sdk            # the bridge script the app is packed with
//   node --import tsx sdk/examples/publish-lobby.ts --email you@example.com [--server http://localhost:8080]
//   MARQUEE_TOKEN=mq_proj_… node --import tsx sdk/examples/publish-lobby.ts --image lobby.jpg --pair K7QX2M
import crypto from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import fs from 'node:fs/promises';
import sharp from 'sharp';
import type { Playlist } from '../contract/playlist';
import { createMarqueeClient, MarqueeProblem, type MarqueeClient, type UploadProgress } from '../client/marquee-client';
import { mediaFile, publishApplicationDirectory } from '../client/node-files';
import { defaultRuntimeScript } from '../pack/pack';

const KV_COUNTER = path.resolve(import.meta.dirname, 'kv-counter');
const CANVAS = { width: 1920, height: 1080, background: '#101820FF' } as const;
const FULL_SCREEN = { x: 0, y: 0, width: 1920, height: 1080 };
/** How long the welcome image stays; the counter page advances itself, with this backstop. */
const WELCOME_MS = 10_000;
const COUNTER_BACKSTOP_MS = 60_000;

export interface LobbyOptions {
  /** The bridge script packed as _marquee/runtime.js. */
  runtime: Uint8Array;
  /** An image file; without it a gradient card is drawn. */
  imagePath?: string;
  /** A code shown by a player: pair it and assign the playlist. */
  pairingCode?: string;
  log?: (line: string) => void;
}

/** A 1920×1080 gradient card, so the example runs without an image of your own. */
async function welcomeCard(): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1920" height="1080">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#0b3d91"/><stop offset="1" stop-color="#2bb3c0"/></linearGradient></defs>
    <rect width="1920" height="1080" fill="url(#g)"/><circle cx="1500" cy="300" r="180" fill="#ffffff" fill-opacity="0.15"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

function progressLogger(log: (line: string) => void, what: string) {
  let last = '';
  return (progress: UploadProgress) => {
    const line =
      progress.stage === 'upload'
        ? `${what}: sent ${progress.sent} of ${progress.total ?? '?'} bytes`
        : `${what}: ${progress.operation?.state ?? 'processing'}`;
    if (line !== last) log((last = line));
  };
}

export async function publishLobby(marquee: MarqueeClient, options: LobbyOptions): Promise<Playlist> {
  const log = options.log ?? (() => undefined);

  const app = await publishApplicationDirectory(marquee, KV_COUNTER, {
    pack: { runtime: options.runtime, name: 'KV counter' },
    onProgress: progressLogger(log, 'kv-counter'),
  });
  log(`application ${app.data.id}: release ${app.releaseId} is ${app.data.state}`);

  const image = options.imagePath
    ? await marquee.media.upload(await mediaFile(options.imagePath), { onProgress: progressLogger(log, 'image') })
    : await marquee.media.upload(await welcomeCard(), {
        filename: 'welcome.png',
        onProgress: progressLogger(log, 'image'),
      });
  log(`media ${image.data.id}: ${image.data.width}×${image.data.height} ${image.data.content_type}`);

  const playlist = await marquee.playlists.create({
    name: 'Lobby',
    pages: [
      {
        id: 'welcome',
        canvas: CANVAS,
        transition: { type: 'crossfade', duration_ms: 600 },
        advance: { mode: 'duration', after_ms: WELCOME_MS },
        placements: [
          {
            id: 'card',
            content: { type: 'image', selector: { by: 'id', media_id: image.data.id } },
            rect: FULL_SCREEN,
            layer: 0,
            content_fit: 'cover',
          },
        ],
      },
      {
        id: 'counter',
        canvas: CANVAS,
        transition: { type: 'crossfade', duration_ms: 600 },
        advance: { mode: 'application', max_ms: COUNTER_BACKSTOP_MS },
        placements: [
          {
            id: 'app',
            content: { type: 'application', release_id: app.releaseId },
            rect: FULL_SCREEN,
            layer: 0,
            content_fit: 'fill',
            controller: true,
          },
        ],
      },
    ],
  });
  log(
    `playlist ${playlist.data.id} (revision ${playlist.revision}); credits left: ${playlist.credits?.remaining ?? 'n/a'}`,
  );

  if (options.pairingCode) {
    const claim = await marquee.screens.pair({ code: options.pairingCode, label: 'Lobby' });
    const screen = await marquee.screens.assign(claim.data.screen.id, playlist.data.id, { ifMatch: claim.data.screen });
    log(
      `screen ${screen.data.id} (${screen.data.state}) shows the playlist; its player is at ${claim.data.public_url}`,
    );
  }
  return playlist.data;
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      server: { type: 'string', default: process.env.MARQUEE_URL ?? 'http://localhost:8080' },
      token: { type: 'string', default: process.env.MARQUEE_TOKEN },
      email: { type: 'string' },
      image: { type: 'string' },
      pair: { type: 'string' },
      'runtime-file': { type: 'string' },
    },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const marquee = createMarqueeClient({ baseUrl: values.server, token: values.token });
  if (!values.token) {
    if (!values.email) throw new Error('pass --token (or MARQUEE_TOKEN), or --email to enroll a new project');
    // A stable installation id would be kept on disk; one per run is enough for an example.
    const { data } = await marquee.enroll({
      client_id: `cli_${crypto.randomBytes(32).toString('base64url')}`,
      email: values.email,
      project_name: 'Lobby',
    });
    marquee.useToken(data.token);
    log(`enrolled project ${data.project.id}; the token is shown once, keep it: export MARQUEE_TOKEN=${data.token}`);
  }
  const runtime = values['runtime-file'] ? await fs.readFile(values['runtime-file']) : await defaultRuntimeScript();
  const playlist = await publishLobby(marquee, { runtime, imagePath: values.image, pairingCode: values.pair, log });
  process.stdout.write(`${JSON.stringify(playlist, null, 2)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof MarqueeProblem ? `${error.code} (${error.status}): ${error.detail}` : (error as Error).message}\n`,
    );
    process.exitCode = 1;
  });
}
