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
export function servePlayer(req: Request, res: Response, dir: string, pairingHintUrl: string): boolean {
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
  const html = shellWithHint(shell, pairingHintUrl);
  if (html === undefined) {
    res.set(PLAYER_FRAMING_HEADERS);
    res
      .status(503)
      .type('text/plain')
      .send('The player is not built yet. Run `npm run build:web` (npm start does this for you).\n');
    return true;
  }
  setPlayerHeaders(res, MIME['.html']!, 'no-cache');
  res.send(html);
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

/**
 * The shell last built per file, with the pairing hint's meta tag in its head: rebuilt only when the
 * build (its mtime and size) or the hint changes, so an answer costs a stat, not a read (caches.ts).
 */
const shells = new Map<string, { mtimeMs: number; size: number; hint: string; html: string }>();

/** The app shell with the pairing hint's meta tag in its head; undefined when there is no build. */
function shellWithHint(file: string, pairingHintUrl: string): string | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return undefined;
  }
  if (!stat.isFile()) return undefined;
  const known = shells.get(file);
  if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size && known.hint === pairingHintUrl)
    return known.html;
  const built = fs.readFileSync(file, 'utf8');
  const meta = `<meta name="${PAIRING_HINT_META}" content="${escapeAttribute(pairingHintUrl)}" />`;
  const head = /<head[^>]*>/i.exec(built) ?? /<!doctype[^>]*>/i.exec(built);
  const at = head ? head.index + head[0].length : 0;
  const html = `${built.slice(0, at)}${meta}${built.slice(at)}`;
  shells.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, hint: pairingHintUrl, html });
  return html;
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function setPlayerHeaders(res: Response, contentType: string, cacheControl: string): void {
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.set(PLAYER_FRAMING_HEADERS);
}

function sendFile(res: Response, file: string, cacheControl: string): void {
  setPlayerHeaders(res, MIME[path.extname(file)] ?? 'application/octet-stream', cacheControl);
  const stream = fs.createReadStream(file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
