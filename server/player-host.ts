// Serves the built player (dist/player) on the runtime plane, with the app shell for its routes.
// The player holds the screen's device and runtime cookies, so it must never run inside a frame: a
// frame (an iframe placement, an uploaded application) that navigates itself to the player origin
// would otherwise run a second player with those cookies (provisioning exchange, public screens).
// Every answer forbids framing, and a navigation the browser says is for a frame is refused.
import fs from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import { PAIRING_HINT_META, PAIRING_HINT_PARAM } from '../sdk/contract/screens';
import { problem } from './problem';

/** Where `npm run build:web` puts the player (ServerOptions.playerDir serves another build). */
export const PLAYER_DIR = path.resolve(import.meta.dirname, '..', 'dist', 'player');

/** On every player answer: no page of any origin may frame it (CSP for today's browsers, XFO for older ones). */
export const PLAYER_FRAMING_HEADERS = {
  'Content-Security-Policy': "frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
} as const;
/** Sec-Fetch-Dest values of a request that loads the player into another page. */
const EMBEDDED_DESTS = new Set(['iframe', 'frame', 'embed', 'object', 'fencedframe']);
/** Paths that belong to the API planes never fall back to the player shell. */
const RESERVED = /^\/(api|runtime|content|problems|dashboard)(\/|$)|^\/\./;

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Answers a GET/HEAD from the built player; false when the path is not the player's. Throws
 * forbidden (a problem that forbids framing too) for a request that embeds the player in a frame.
 */
export function servePlayer(
  req: Request,
  res: Response,
  dir: string,
  options: { pairingHintUrl?: string } = {},
): boolean {
  const playerDir = path.resolve(dir);
  if (RESERVED.test(req.path)) return false;
  let decoded: string;
  try {
    decoded = decodeURIComponent(req.path);
  } catch {
    return false;
  }
  const dest = req.get('sec-fetch-dest');
  if (dest !== undefined && EMBEDDED_DESTS.has(dest.toLowerCase())) {
    throw problem('forbidden', 'the player never runs inside a frame; open it as the top-level page of the screen', {
      headers: PLAYER_FRAMING_HEADERS,
    });
  }
  const relative = path.normalize(decoded);
  const candidate = path.join(playerDir, relative);
  if (candidate.startsWith(playerDir + path.sep) && isFile(candidate)) {
    sendFile(res, candidate, relative.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    return true;
  }
  if (path.extname(relative) !== '') return false;
  const shell = path.join(playerDir, 'index.html');
  if (!isFile(shell)) {
    res.set(PLAYER_FRAMING_HEADERS);
    res
      .status(503)
      .type('text/plain')
      .send('The player is not built yet. Run `npm run build:web` (npm start does this for you).\n');
    return true;
  }
  if (options.pairingHintUrl === undefined) sendFile(res, shell, 'no-cache');
  else sendShell(res, shell, options.pairingHintUrl);
  return true;
}

/**
 * The dashboard's pairing link for a code: a phone that scans the player's QR code opens the
 * dashboard's Screens page with the code filled in ({code} is the player's to replace).
 */
export function dashboardPairingHint(dashboardOrigin: string): string {
  return `${dashboardOrigin}/screens?${PAIRING_HINT_PARAM}={code}`;
}

const escapeAttribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The app shell with the pairing hint's meta tag in its head (read per answer: it is small). */
function sendShell(res: Response, file: string, pairingHintUrl: string): void {
  let html: string;
  try {
    html = fs.readFileSync(file, 'utf8');
  } catch {
    res.destroy();
    return;
  }
  const meta = `<meta name="${PAIRING_HINT_META}" content="${escapeAttribute(pairingHintUrl)}" />`;
  res.setHeader('Content-Type', MIME['.html']!);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.set(PLAYER_FRAMING_HEADERS);
  const head = /<head[^>]*>/i.exec(html) ?? /<!doctype[^>]*>/i.exec(html);
  const at = head ? head.index + head[0].length : 0;
  res.send(`${html.slice(0, at)}${meta}${html.slice(at)}`);
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function sendFile(res: Response, file: string, cacheControl: string): void {
  res.setHeader('Content-Type', MIME[path.extname(file)] ?? 'application/octet-stream');
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.set(PLAYER_FRAMING_HEADERS);
  const stream = fs.createReadStream(file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
