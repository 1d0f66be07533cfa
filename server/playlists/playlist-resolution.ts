// Selector materialization and reference resolution: a pure function from a written playlist and a
// snapshot of the tenant's content to the served document, its dependencies, and what is wrong.
import type {
  AdslotPage,
  AdslotPageWrite,
  Advance,
  AdvanceWrite,
  AudioWrite,
  MediaSelector,
  Page,
  PageWrite,
  Placement,
  PlacementWrite,
  PlaylistAudio,
  PlaylistMediaItem,
} from '../../sdk/contract/playlist';
import { ADVANCE_MAX_MS, ADVANCE_MIN_MS, SELECTOR_MAX_ITEMS } from '../../sdk/contract/playlist';
import type { FieldError } from '../problem';
import type { PlaylistDependencyKind } from './playlists.tables';

/** A media a placement may show: ready, owned, with verified facts. */
export interface MediaFacts {
  id: string;
  kind: 'image' | 'video' | 'audio';
  content_type: string;
  width: number | null;
  height: number | null;
  duration_ms: number | null;
  tag: string | null;
  created_at: number;
}

/** A ready release of a live application of the tenant. */
export interface ReleaseFacts {
  id: string;
  application_id: string;
}

/** What the resolver may see of the tenant's content: only ready, owned, showable things. */
export interface ContentSnapshot {
  media: Map<string, MediaFacts>;
  /** Ready image and video media, oldest first, for `tag` and `all` selectors. */
  ordered: MediaFacts[];
  releases: Map<string, ReleaseFacts>;
}

/** What the resolver needs loaded: referenced ids, and whether dynamic selectors need the full list. */
export interface ContentNeeds {
  mediaIds: Set<string>;
  releaseIds: Set<string>;
  dynamic: boolean;
}

export interface Dependency {
  kind: PlaylistDependencyKind;
  ref: string;
}

export interface Resolution {
  pages: (Page | AdslotPage)[];
  audio?: PlaylistAudio;
  dependencies: Dependency[];
  /** Problems that make the document unshowable (a write is refused; a stored one is unavailable). */
  blocking: FieldError[];
  /** Problems a write is refused for but a re-resolution tolerates (it trims instead). */
  authoring: FieldError[];
  hasVisibility: boolean;
  adBearing: boolean;
}

export interface WrittenDocument {
  pages: (PageWrite | AdslotPageWrite)[];
  audio?: AudioWrite;
}

/** Extra time a media_end deadline allows beyond the resolved lengths (buffering, decoding). */
export const MEDIA_END_GRACE_MS = 2000;
/** Length assumed for a video whose duration could not be verified. */
export const MEDIA_END_UNKNOWN_LENGTH_MS = 10 * 60_000;
export const AUDIO_CONTENT_TYPE = 'audio/mpeg'; // spec: the soundtrack is MP3

export function contentNeeds(doc: WrittenDocument): ContentNeeds {
  const needs: ContentNeeds = { mediaIds: new Set(), releaseIds: new Set(), dynamic: false };
  for (const page of doc.pages) {
    const placements = isAdslot(page) ? page.fallback.placements : page.placements;
    for (const p of placements) {
      const c = p.content;
      if (c.type === 'application') needs.releaseIds.add(c.release_id);
      if (c.type === 'image' || c.type === 'video') {
        const s = c.selector;
        if (s.by === 'id') needs.mediaIds.add(s.media_id);
        else if (s.by === 'ids') s.media_ids.forEach((id) => needs.mediaIds.add(id));
        else needs.dynamic = true;
      }
    }
  }
  for (const t of doc.audio?.tracks ?? []) needs.mediaIds.add(t.media_id);
  return needs;
}

export function resolvePlaylist(doc: WrittenDocument, content: ContentSnapshot): Resolution {
  const blocking: FieldError[] = [];
  const authoring: FieldError[] = [];
  const deps = new Map<string, Dependency>();
  const depend = (kind: PlaylistDependencyKind, ref: string) => deps.set(`${kind}\u0000${ref}`, { kind, ref });

  const resolveBody = (path: string, body: { advance: AdvanceWrite; placements: PlacementWrite[] }) => {
    const placements = body.placements.map((p, i) =>
      resolvePlacement(`${path}.placements.${i}`, p, body.advance, content, depend, blocking, authoring),
    );
    return { placements, advance: resolveAdvance(body.advance, body.placements, placements, content) };
  };

  const pages = doc.pages.map((page, i): Page | AdslotPage => {
    const path = `pages.${i}`;
    if (isAdslot(page)) {
      const { placements, advance } = resolveBody(`${path}.fallback`, page.fallback);
      return {
        type: 'adslot',
        id: page.id,
        slot: page.slot,
        transition: page.transition,
        ...(page.visibility ? { visibility: page.visibility } : {}),
        fallback: { canvas: page.fallback.canvas, advance, placements },
      };
    }
    const { placements, advance } = resolveBody(path, page);
    return {
      id: page.id,
      canvas: page.canvas,
      transition: page.transition,
      advance,
      ...(page.visibility ? { visibility: page.visibility } : {}),
      placements,
    };
  });

  let audio: PlaylistAudio | undefined;
  if (doc.audio) {
    audio = {
      tracks: doc.audio.tracks.flatMap((track, i) => {
        depend('media', track.media_id);
        const media = content.media.get(track.media_id);
        if (!media || media.content_type !== AUDIO_CONTENT_TYPE) {
          blocking.push({
            field: `audio.tracks.${i}.media_id`,
            code: media ? 'wrong_kind' : 'not_ready',
            detail: media
              ? `${track.media_id} is ${media.content_type}; the soundtrack plays ${AUDIO_CONTENT_TYPE} media`
              : notReady(track.media_id),
          });
          return [];
        }
        return [
          media.duration_ms !== null ? { media_id: media.id, duration_ms: media.duration_ms } : { media_id: media.id },
        ];
      }),
    };
  }

  return {
    pages,
    ...(audio ? { audio } : {}),
    dependencies: [...deps.values()],
    blocking,
    authoring,
    hasVisibility: doc.pages.some((p) => p.visibility !== undefined),
    adBearing: doc.pages.some(isAdslot),
  };
}

function isAdslot(page: PageWrite | AdslotPageWrite): page is AdslotPageWrite {
  return (page as AdslotPageWrite).type === 'adslot';
}

function notReady(id: string): string {
  return `${id} is not a ready media of this project`;
}

function resolvePlacement(
  path: string,
  p: PlacementWrite,
  advance: AdvanceWrite,
  content: ContentSnapshot,
  depend: (kind: PlaylistDependencyKind, ref: string) => void,
  blocking: FieldError[],
  authoring: FieldError[],
): Placement {
  const base = {
    id: p.id,
    rect: p.rect,
    layer: p.layer,
    content_fit: p.content_fit,
    controller: p.content.type === 'application' ? (p.controller ?? false) : false,
    ...(p.enter ? { enter: p.enter } : {}),
  };
  const c = p.content;
  if (c.type === 'iframe') return { ...base, content: c };
  if (c.type === 'application') {
    depend('release', c.release_id);
    const release = content.releases.get(c.release_id);
    if (!release) {
      blocking.push({
        field: `${path}.content.release_id`,
        code: 'not_ready',
        detail: `${c.release_id} is not a ready release of this project`,
      });
    } else {
      depend('application', release.application_id);
      if (c.application_id !== undefined && c.application_id !== release.application_id) {
        blocking.push({
          field: `${path}.content.application_id`,
          code: 'mismatch',
          detail: `${c.release_id} is a release of another application`,
        });
      }
    }
    return {
      ...base,
      content: {
        type: 'application',
        release_id: c.release_id,
        application_id: release?.application_id ?? c.application_id ?? '',
      },
    };
  }
  const items = resolveSelector(`${path}.content.selector`, c.selector, c.type, content, depend, blocking, authoring);
  if (advance.mode !== 'media_end' && items.length > 1 && !c.selector.one_at_a_time) {
    authoring.push({
      field: `${path}.content.selector.one_at_a_time`,
      code: 'required',
      detail: `the selector resolves to ${items.length} media; set one_at_a_time true unless the page advances on media_end`,
    });
  }
  if (c.type === 'image') return { ...base, content: { ...c, items } };
  return { ...base, content: { type: 'video', selector: c.selector, items, muted: true, loop: c.loop } };
}

function resolveSelector(
  path: string,
  selector: MediaSelector,
  kind: 'image' | 'video',
  content: ContentSnapshot,
  depend: (kind: PlaylistDependencyKind, ref: string) => void,
  blocking: FieldError[],
  authoring: FieldError[],
): PlaylistMediaItem[] {
  const explicit = (id: string, field: string): PlaylistMediaItem[] => {
    depend('media', id);
    const media = content.media.get(id);
    if (!media || media.width === null || media.height === null || media.kind === 'audio') {
      blocking.push({ field, code: 'not_ready', detail: notReady(id) });
      return [];
    }
    if (media.kind !== kind) {
      blocking.push({
        field,
        code: 'wrong_kind',
        detail: `${id} is ${article(media.kind)}; ${article(kind)} placement shows ${kind}s`,
      });
      return [];
    }
    return [item(media)];
  };
  if (selector.by === 'id') return explicit(selector.media_id, `${path}.media_id`);
  if (selector.by === 'ids') return selector.media_ids.flatMap((id, i) => explicit(id, `${path}.media_ids.${i}`));

  if (selector.by === 'tag') depend('media_tag', selector.tag);
  else depend('media_all', '*');
  const matches = content.ordered.filter(
    (m) =>
      m.kind === kind && m.width !== null && m.height !== null && (selector.by === 'all' || m.tag === selector.tag),
  );
  const what = selector.by === 'tag' ? `ready ${kind} media tagged "${selector.tag}"` : `ready ${kind} media`;
  if (matches.length === 0) blocking.push({ field: path, code: 'no_match', detail: `the selector matches no ${what}` });
  if (matches.length > SELECTOR_MAX_ITEMS) {
    authoring.push({
      field: path,
      code: 'too_many',
      detail: `the selector matches ${matches.length} ${what}; at most ${SELECTOR_MAX_ITEMS}`,
    });
  }
  const chosen = matches.slice(0, SELECTOR_MAX_ITEMS);
  for (const m of chosen) depend('media', m.id);
  return chosen.map(item);
}

function item(media: MediaFacts): PlaylistMediaItem {
  return { media_id: media.id, intrinsic_size: { width: media.width!, height: media.height! } };
}

function article(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

/** The served advance: media_end always carries the server's deadline. */
function resolveAdvance(
  advance: AdvanceWrite,
  written: PlacementWrite[],
  placements: Placement[],
  content: ContentSnapshot,
): Advance {
  if (advance.mode !== 'media_end') return advance;
  const index = written.findIndex((p) => p.content.type === 'image' || p.content.type === 'video');
  const placement = placements[index];
  let computed = 0;
  if (placement && (placement.content.type === 'image' || placement.content.type === 'video')) {
    const shown = placement.content;
    const lengths = shown.items.map((i) => {
      if (shown.type === 'image') return shown.dwell_ms ?? 0;
      return content.media.get(i.media_id)?.duration_ms ?? MEDIA_END_UNKNOWN_LENGTH_MS;
    });
    const oneAtATime = shown.selector.one_at_a_time;
    computed = lengths.length === 0 ? 0 : oneAtATime ? Math.max(...lengths) : lengths.reduce((a, b) => a + b, 0);
  }
  const deadline = Math.max(computed + MEDIA_END_GRACE_MS, advance.max_ms ?? 0);
  return { mode: 'media_end', max_ms: Math.min(ADVANCE_MAX_MS, Math.max(ADVANCE_MIN_MS, deadline)) };
}
