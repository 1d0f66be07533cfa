// The access page on the dashboard origin: one small static page (access.html, .js, .css) over the
// /dashboard/v1 routes, for accepting invitations, finishing resets (the dashboard app sends links'
// `#invite=` and `#reset=` here, at /access) and approving agents (/connect/{id}). It runs only its
// own script and may not be framed (approving an agent must never be clickjacked).
import fs from 'node:fs';
import path from 'node:path';
import { query } from '../http/route';
import { checkDashboardRequest } from '../sign-in/dashboard.auth';
import { problem } from '../problem';

const DIR = import.meta.dirname;
/** Each file the page uses: its type and where it lives (the icon is the dashboard app's own). */
const ASSETS: Record<string, { type: string; file: string }> = {
  'access.js': { type: 'text/javascript; charset=utf-8', file: path.join(DIR, 'access.js') },
  'access.css': { type: 'text/css; charset=utf-8', file: path.join(DIR, 'access.css') },
  'favicon.svg': { type: 'image/svg+xml', file: path.join(DIR, '..', '..', 'dashboard', 'favicon.svg') },
};

export const ACCESS_PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
} as const;

export const accessPage = query({}, async (ctx) => {
  checkDashboardRequest(ctx);
  const html = fs.readFileSync(path.join(DIR, 'access.html'));
  ctx.res
    .status(200)
    .set({ ...ACCESS_PAGE_HEADERS, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
  ctx.res.end(ctx.req.method === 'HEAD' ? undefined : html);
});

export const accessAsset = query({}, async (ctx) => {
  const name = ctx.params.file!;
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!asset) throw problem('not_found', 'no such file');
  const body = fs.readFileSync(asset.file);
  ctx.res.status(200).set({ ...ACCESS_PAGE_HEADERS, 'Content-Type': asset.type, 'Cache-Control': 'no-cache' });
  ctx.res.end(ctx.req.method === 'HEAD' ? undefined : body);
});
