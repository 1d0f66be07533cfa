// Serves the built player (dist/player) on the runtime plane, with the app shell for its routes.
import fs from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';

const PLAYER_DIR = path.resolve(import.meta.dirname, '..', 'dist', 'player');
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

/** Answers a GET/HEAD from the built player; false when the path is not the player's. */
export function servePlayer(req: Request, res: Response): boolean {
  if (RESERVED.test(req.path)) return false;
  let decoded: string;
  try {
    decoded = decodeURIComponent(req.path);
  } catch {
    return false;
  }
  const relative = path.normalize(decoded);
  const candidate = path.join(PLAYER_DIR, relative);
  if (candidate.startsWith(PLAYER_DIR + path.sep) && isFile(candidate)) {
    sendFile(res, candidate, relative.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    return true;
  }
  if (path.extname(relative) !== '') return false;
  const shell = path.join(PLAYER_DIR, 'index.html');
  if (!isFile(shell)) {
    res.status(503).type('text/plain').send('The player is not built yet. Run `npm run build:web` (npm start does this for you).\n');
    return true;
  }
  sendFile(res, shell, 'no-cache');
  return true;
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
  const stream = fs.createReadStream(file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
