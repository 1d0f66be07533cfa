// The client's playlist routes (v1 and v2) against a real Marquee server.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../../server/testing/harness';
import { testClient } from '../testing/client-fixture';
import type { MarqueeProblem, PlaylistDocument, PlaylistDocumentV2 } from './marquee-client';

let server: TestServer;
let baseUrl: string;
let png: Buffer;

beforeAll(async () => {
  server = await TestServer.start();
  baseUrl = `http://127.0.0.1:${server.port}`;
  png = await sharp({ create: { width: 64, height: 36, channels: 3, background: '#204060' } })
    .png()
    .toBuffer();
});
afterAll(async () => server?.stop());

async function projectWithImage() {
  const { token } = await server.enroll();
  const c = testClient(baseUrl, { token });
  const { data: media } = await c.media.upload(png, { filename: 'slide.png' });
  return { c, mediaId: media.id };
}

/** One image page; defaults such as `viewport_fit` and `one_at_a_time` are left out. */
function imageDocument(name: string, mediaId: string): PlaylistDocument {
  return {
    name,
    pages: [
      {
        id: 'welcome',
        canvas: { width: 1920, height: 1080, background: '#000000FF' },
        transition: { type: 'crossfade', duration_ms: 300 },
        advance: { mode: 'duration', after_ms: 8000 },
        placements: [
          {
            id: 'slide',
            content: { type: 'image', selector: { by: 'id', media_id: mediaId } },
            rect: { x: 0, y: 0, width: 1920, height: 1080 },
            layer: 0,
            content_fit: 'cover',
          },
        ],
      },
    ],
  };
}

describe('playlists (v1)', () => {
  it('creates, reads, lists, replaces with If-Match from the playlist, and deletes', async () => {
    const { c, mediaId } = await projectWithImage();
    const created = await c.playlists.create(imageDocument('Lobby loop', mediaId));
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({ name: 'Lobby loop', revision: 1 });
    expect(created.data.pages[0]!.placements[0]!.content).toMatchObject({
      type: 'image',
      items: [{ media_id: mediaId, intrinsic_size: { width: 64, height: 36 } }],
    });
    expect(created.revision).toBe(1);
    expect(created.credits?.remaining).toBeTypeOf('number');

    expect((await c.playlists.get(created.data.id)).data.name).toBe('Lobby loop');
    expect((await c.playlists.list()).data.items.map((p) => p.id)).toEqual([created.data.id]);

    const replaced = await c.playlists.replace(created.data.id, imageDocument('Lobby loop, evening', mediaId), {
      ifMatch: created.data,
    });
    expect([replaced.data.name, replaced.revision]).toEqual(['Lobby loop, evening', 2]);
    const stale = (await c.playlists
      .replace(created.data.id, imageDocument('Stale', mediaId), { ifMatch: created })
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect([stale.code, stale.status, stale.current_revision]).toEqual(['revision_conflict', 412, 2]);

    expect((await c.playlists.delete(created.data.id, { ifMatch: replaced })).status).toBe(204);
    expect(((await c.playlists.get(created.data.id).catch((e: unknown) => e)) as MarqueeProblem).code).toBe(
      'not_found',
    );
  });

  it('reports the invalid fields of a bad document', async () => {
    const { c, mediaId } = await projectWithImage();
    const bad = { ...imageDocument('', mediaId) };
    const error = (await c.playlists.create(bad).catch((e: unknown) => e)) as MarqueeProblem;
    expect([error.code, error.status]).toEqual(['invalid_request', 400]);
    expect(error.errors.map((e) => e.field)).toContain('name');
  });

  it('requires If-Match and an idempotency key from an account, and the client sends both', async () => {
    const { token } = await server.createAccount();
    const c = testClient(baseUrl, { token });
    const { data: media } = await c.media.upload(png, { filename: 'a.png' });
    const created = await c.playlists.create(imageDocument('Account loop', media.id));
    const unguarded = (await c.playlists
      .replace(created.data.id, imageDocument('No guard', media.id))
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect(unguarded.errors[0]).toMatchObject({ field: 'If-Match', code: 'required' });
    expect(
      (await c.playlists.replace(created.data.id, imageDocument('Guarded', media.id), { ifMatch: created })).data.name,
    ).toBe('Guarded');
  });

  it("answers not_found for another project's playlist", async () => {
    const { c, mediaId } = await projectWithImage();
    const other = testClient(baseUrl, { token: (await server.enroll()).token });
    const { data } = await c.playlists.create(imageDocument('Mine', mediaId));
    expect(((await other.playlists.get(data.id).catch((e: unknown) => e)) as MarqueeProblem).code).toBe('not_found');
  });
});

describe('playlists (v2)', () => {
  it('stores adslot pages through v2; v1 refuses that document with version_required', async () => {
    const { c, mediaId } = await projectWithImage();
    const base = imageDocument('Ads', mediaId);
    const document: PlaylistDocumentV2 = {
      ...base,
      pages: [
        ...base.pages,
        {
          type: 'adslot',
          id: 'break',
          slot: { key: 'lobby-break', duration_ms: 15000 },
          transition: { type: 'crossfade', duration_ms: 300 },
          fallback: {
            canvas: base.pages[0]!.canvas,
            advance: { mode: 'duration', after_ms: 15000 },
            placements: base.pages[0]!.placements,
          },
        },
      ],
    };
    const created = await c.playlists.v2.create(document);
    expect(created.data.pages.map((p) => p.id)).toEqual(['welcome', 'break']);
    expect((await c.playlists.v2.list()).data.items.map((p) => p.id)).toEqual([created.data.id]);
    const replaced = await c.playlists.v2.replace(
      created.data.id,
      { ...document, name: 'Ads 2' },
      { ifMatch: created },
    );
    expect(replaced.revision).toBe(2);
    expect((await c.playlists.v2.get(created.data.id)).data.name).toBe('Ads 2');

    const refused = (await c.playlists.get(created.data.id).catch((e: unknown) => e)) as MarqueeProblem;
    expect(refused.code).toBe('version_required');

    expect((await c.playlists.v2.delete(created.data.id)).status).toBe(204);
  });
});
