// Serves the built dashboard (dist/dashboard, `npm run build:web`) on the dashboard origin: its
// hashed assets, and its one HTML shell for every page path (the app routes on the client). The
// shell runs only its own scripts and may not be framed (a framed dashboard could be clickjacked into
// archiving screens or approving agents). A browser's navigation to a path that is no page gets the
// shell too, as a 404, and the app shows its not-found view (the API keeps its JSON problems).
import fs from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import { query } from '../http/route';
import { problem } from '../problem';
import { checkDashboardRequest } from '../sign-in/dashboard.auth';

/** Where `npm run build:web` puts the dashboard (vite.config.ts, mode `dashboard`). */
export const DASHBOARD_DIR = path.resolve(import.meta.dirname, '..', '..', 'dist', 'dashboard');

export const DASHBOARD_HEADERS = dashboardHeaders();

/**
 * The dashboard's headers. `uploadOrigin` is the bucket that media uploads `PUT` to straight from
 * the page (MARQUEE_BLOB_URL); a local blob store's signed PUT is on the dashboard origin itself.
 */
export function dashboardHeaders(uploadOrigin?: string) {
  const connect = uploadOrigin === undefined ? "'self'" : `'self' ${uploadOrigin}`;
  return {
    // Media previews are same-origin bytes (/dashboard/v1/media/{id}/content) or local blob: URLs.
    'Content-Security-Policy': `default-src 'none'; script-src 'self'; style-src 'self'; connect-src ${connect}; img-src 'self' blob: data:; media-src 'self' blob:; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  } as const;
}

const MIME: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/**
 * The app's pages (dashboard/src/app/routes.tsx routes these on the client; a test holds the two
 * lists equal). Listed rather than caught by a wildcard, so other paths keep their 404 and 405.
 */
export const DASHBOARD_PAGES = [
  '/',
  '/sign-in',
  '/screens',
  '/screens/:id',
  '/playlists',
  '/playlists/:id',
  '/media',
  '/events',
  '/members',
  '/billing',
  '/applications',
  '/applications/:id',
  '/proof-of-play',
] as const;

/** The file under `dir/assets` that a request names, or undefined (unknown type, outside the folder). */
export function assetFile(dir: string, name: string): { file: string; type: string } | undefined {
  const type = MIME[path.extname(name)];
  if (!type || name.includes('/') || name.includes('\\') || name.startsWith('.')) return undefined;
  const file = path.join(dir, 'assets', name);
  return isFile(file) ? { file, type } : undefined;
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The dashboard's own JSON API: its unknown paths answer problems, whatever the client accepts. */
const DASHBOARD_API = /^\/dashboard\/v1(\/|$)/i;

/**
 * Whether a request the route table has no route for is a person's browser navigating on the
 * dashboard origin (GET or HEAD that accepts HTML, not the API, not loaded by another site, no
 * Authorization header: what the shell itself would answer).
 */
export function isPageNavigation(req: Request): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (DASHBOARD_API.test(req.path) || req.headers.authorization !== undefined) return false;
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return false;
  return /\btext\/html\b/i.test(req.headers.accept ?? '');
}

/** Sends the built shell with the dashboard's headers and `status`; false when it is not built. */
function sendShell(res: Response, method: string, dir: string, status: number, uploadOrigin?: string): boolean {
  const index = path.join(dir, 'index.html');
  if (!isFile(index)) return false;
  res.status(status).set({
    ...dashboardHeaders(uploadOrigin),
    'Cache-Control': 'no-cache',
    'Content-Type': 'text/html; charset=utf-8',
  });
  res.end(method === 'HEAD' ? undefined : fs.readFileSync(index));
  return true;
}

/** Answers a mistyped page address with the shell and 404 (the app shows "no such page"); false when not built. */
export function serveNotFoundPage(res: Response, method: string, dir: string, uploadOrigin?: string): boolean {
  return sendShell(res, method, dir, 404, uploadOrigin);
}

export function dashboardApp(dir: string) {
  const shell = query({}, async (ctx) => {
    checkDashboardRequest(ctx);
    if (sendShell(ctx.res, ctx.req.method, dir, 200, ctx.services.blobs.uploadOrigin)) return;
    ctx.res
      .status(503)
      .set({ ...dashboardHeaders(ctx.services.blobs.uploadOrigin), 'Cache-Control': 'no-cache' })
      .type('text/plain')
      .end('The dashboard is not built yet. Run `npm run build:web` (npm start does this for you).\n');
  });

  const asset = query({}, async (ctx) => {
    checkDashboardRequest(ctx);
    const found = assetFile(dir, ctx.params.file!);
    if (!found) throw problem('not_found', 'no such file');
    ctx.res.status(200).set({
      ...DASHBOARD_HEADERS,
      'Content-Type': found.type,
      // Names carry their content hash (Vite), so they never change.
      'Cache-Control': 'public, max-age=31536000, immutable',
    });
    // Whole: the files are small, and the pipeline expects the answer sent when the handler returns.
    ctx.res.end(ctx.req.method === 'HEAD' ? undefined : fs.readFileSync(found.file));
  });

  return { shell, asset };
}

export const { shell: dashboardShell, asset: dashboardAsset } = dashboardApp(DASHBOARD_DIR);
