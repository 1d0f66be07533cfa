// GET and HEAD /{asset_path} on `<label>.release.<host>` (spec: Release host). A launch ticket
// becomes the exact-host release-grant cookie through a 302; the cookie is re-checked on every
// request; files are looked up in the release's index, never on a path built from the URL.
import type { Request } from 'express';
import { RELEASE_ENTRY } from '../../sdk/contract/applications';
import { CONTROL_CHARACTER } from '../../sdk/contract/limits';
import { readyReleaseAt, releaseFile, releaseFileKey } from '../applications/applications';
import { problem } from '../problem';
import { query, type Reply, type RequestContext } from '../http/route';
import { streamToClient } from '../http/streaming';
import { parseRange } from '../media/byte-range';
import { sha256Hex } from '../keys';
import { contentTypeOf } from './content-types';
import { fetchMetadataConflict, fetchMetadataOf } from './fetch-metadata';
import { HOST_LABEL_PATTERN } from './host-label';
import { consumeLaunchTicket, releaseGrantLive } from './launch-tickets';
import { readReleaseGrant, releaseGrantSetCookie } from './release-grant-cookie';

/** Releases never change, and each has its own origin: browsers may keep files as long as they like. */
const IMMUTABLE_CACHING = 'private, max-age=31536000, immutable';

const NO_REFERRER = { 'Referrer-Policy': 'no-referrer' };

function forbidden(detail: string) {
  return problem('forbidden', detail, { headers: NO_REFERRER });
}

/** One answer for every path that is not a file of the release: nothing about the layout leaks. */
function notFound() {
  return problem('not_found', 'no such file in this release', { headers: NO_REFERRER });
}

export const releaseAsset = query({ meter: false }, async (ctx): Promise<Reply | void> => {
  const { req, res, services, now } = ctx;
  const { pathname, search } = splitUrl(req.originalUrl);
  const ticketValues = queryValues(search, 'ticket');
  const ticket = ticketValues.length > 0;
  const conflict = fetchMetadataConflict(fetchMetadataOf(req.headers), { ticket });
  if (conflict) throw forbidden(`contradictory Fetch Metadata: ${conflict}`);

  const { label, release } = await readyRelease(ctx);

  if (ticket) {
    if (ticketValues.length > 1) throw forbidden('send exactly one launch ticket');
    const binding = await services.store.transaction(async ({ db: tx }) => {
      const consumed = await consumeLaunchTicket(tx, ticketValues[0]!, label, now);
      if (!consumed || consumed.releaseId !== release.id || !(await releaseGrantLive(tx, consumed))) return undefined;
      return consumed;
    });
    if (!binding) throw forbidden('the launch ticket is unknown, expired, already used or meant for another host');
    const rest = withoutParam(search, 'ticket');
    return {
      status: 302,
      headers: {
        Location: sameHostPath(pathname) + rest,
        'Set-Cookie': releaseGrantSetCookie(services.keys, binding, now),
        'Cache-Control': 'no-store',
        ...NO_REFERRER,
      },
    };
  }

  await requireReleaseGrant(ctx, label, release);

  const path = assetPath(pathname);
  if (path === undefined) throw notFound();
  const file = await releaseFile(services.store.db, release.id, path);
  if (!file) throw notFound();

  // Strong: a release's bytes never change, so one (release, path) is one representation.
  const etag = `"${sha256Hex(`${release.id}\u0000${path}`).slice(0, 32)}"`;
  res.set({
    ETag: etag,
    'Cache-Control': IMMUTABLE_CACHING,
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Resource-Policy': 'same-origin',
    ...NO_REFERRER,
  });
  if (etagMatches(req, etag)) {
    res.status(304).end();
    return;
  }
  // One byte range, as protected media answers it: a video of the application seeks and loops, and
  // a browser plays an MP4 whose index comes last only when it can fetch that end first.
  const ifRange = req.headers['if-range'] as string | undefined; // one value: Node joins repeated ones
  const range =
    file.bytes === 0
      ? ({ kind: 'whole' } as const)
      : parseRange(ifRange === undefined || ifRange.trim() === etag ? req.headers.range : undefined, file.bytes);
  if (range.kind === 'refused') {
    throw problem('invalid_range', range.reason, {
      headers: { 'Content-Range': `bytes */${file.bytes}`, 'Accept-Ranges': 'bytes', ...NO_REFERRER },
    });
  }
  const { start, end } = range.kind === 'range' ? range : { start: 0, end: file.bytes - 1 };
  res.status(range.kind === 'range' ? 206 : 200).set({
    'Content-Type': contentTypeOf(path),
    'Content-Length': String(end - start + 1),
    'Accept-Ranges': 'bytes',
    ...(range.kind === 'range' ? { 'Content-Range': `bytes ${start}-${end}/${file.bytes}` } : {}),
  });
  if (req.method === 'HEAD' || file.bytes === 0) {
    res.end();
    return;
  }
  await streamToClient(req, res, services.blobs.read(releaseFileKey(release.id, file.ordinal), { start, end }));
});

type Ctx = RequestContext<unknown, unknown, undefined>;
interface ReadyRelease {
  id: string;
  tenant_id: string;
}

/** The ready release this host serves, or the one 403 every other host gets. */
async function readyRelease(ctx: Ctx): Promise<{ label: string; release: ReadyRelease }> {
  const label = ctx.res.locals.releaseLabel as string | undefined;
  if (!label || !HOST_LABEL_PATTERN.test(label)) throw forbidden('this host is not a release host');
  const release = await readyReleaseAt(ctx.services.store.db, label);
  if (!release) throw forbidden('this release host serves no ready release');
  return { label, release };
}

/** A valid, live release-grant cookie for exactly this host and release, else 403. */
async function requireReleaseGrant(ctx: Ctx, label: string, release: ReadyRelease): Promise<void> {
  const grant = readReleaseGrant(ctx.services.keys, ctx.req.headers.cookie, ctx.now);
  if (!grant) throw forbidden('this request needs a valid release-grant cookie; launch the release again');
  if (grant.hostLabel !== label || grant.releaseId !== release.id || grant.tenantId !== release.tenant_id) {
    throw forbidden('the release grant is for another release host');
  }
  if (!(await releaseGrantLive(ctx.services.store.db, grant)))
    throw forbidden('the release grant was revoked or is no longer current; launch the release again');
}

/**
 * GET and HEAD `/.marquee/player-origin`: the player origin the release's frames trust, answered by
 * the server on every release host (archives cannot hold `.marquee/`). The bridge child reads it
 * before it accepts a handshake, so release hosts may live on any domain, in particular one that is
 * not the player's site (their frames then get their own process). Authorized like a file, by the
 * cookie only: a launch ticket is never consumed here.
 */
export const releasePlayerOrigin = query({ meter: false }, async (ctx): Promise<Reply | void> => {
  const { req, res, services } = ctx;
  const conflict = fetchMetadataConflict(fetchMetadataOf(req.headers), { ticket: false });
  if (conflict) throw forbidden(`contradictory Fetch Metadata: ${conflict}`);
  const { label, release } = await readyRelease(ctx);
  await requireReleaseGrant(ctx, label, release);
  const body = JSON.stringify({ player_origin: services.config.playOrigin });
  // writeHead, not res.set: Express would append a charset to the JSON type.
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Resource-Policy': 'same-origin',
    ...NO_REFERRER,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
});

/**
 * The path as a same-host redirect target: a leading `//` or `/\` would make `Location`
 * scheme-relative (another host), so any run of leading slashes and backslashes becomes one `/`.
 */
function sameHostPath(pathname: string): string {
  return `/${pathname.replace(/^[/\\]+/, '')}`;
}

function splitUrl(url: string): { pathname: string; search: string } {
  const q = url.indexOf('?');
  return q < 0 ? { pathname: url, search: '' } : { pathname: url.slice(0, q), search: url.slice(q) };
}

function decodeParam(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function decodeSegment(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function queryValues(search: string, name: string): string[] {
  return search
    .slice(1)
    .split('&')
    .filter((part) => part !== '' && decodeParam(part.split('=', 1)[0]!) === name)
    .map((part) => decodeParam(part.slice(part.indexOf('=') + 1 || part.length)) ?? '');
}

/** The query string without `name`, everything else exactly as sent. */
function withoutParam(search: string, name: string): string {
  const kept = search
    .slice(1)
    .split('&')
    .filter((part) => part !== '' && decodeParam(part.split('=', 1)[0]!) !== name);
  return kept.length > 0 ? `?${kept.join('&')}` : '';
}

/**
 * The release-relative path a URL path names, or undefined when it cannot name a file: decoded
 * per segment (so `%2e%2e` is `..` and refused), `…/` means its index.html, NFC like the index.
 */
export function assetPath(pathname: string): string | undefined {
  const segments = pathname.replace(/^\//, '').split('/');
  const decoded: string[] = [];
  for (const [i, raw] of segments.entries()) {
    const segment = decodeSegment(raw);
    if (segment === undefined) return undefined;
    if (segment === '' && i === segments.length - 1) {
      decoded.push(RELEASE_ENTRY);
      continue;
    }
    if (
      segment === '' ||
      segment === '.' ||
      segment === '..' ||
      segment.includes('/') ||
      segment.includes('\\') ||
      CONTROL_CHARACTER.test(segment)
    )
      return undefined;
    decoded.push(segment);
  }
  return decoded.join('/').normalize('NFC');
}

function etagMatches(req: Request, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  return header.split(',').some((candidate) => candidate.trim() === etag || candidate.trim() === '*');
}
