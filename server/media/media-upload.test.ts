import net from 'node:net';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TestClock } from '../clock';
import { TestServer, randomKey } from '../testing/harness';
import { commit, declare, image, mp3, mp3DurationMs, put, sha256, upload, uploadReady, video } from './media.fixtures';
import { UPLOAD_COMMIT_WINDOW_MS, UPLOAD_URL_TTL_MS } from './media-uploads';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await TestServer.start({ clock: new TestClock('2026-11-21T12:00:00Z') });
});
// A fresh project per test: quota figures start at zero and upload admission budgets are its own.
beforeEach(async () => {
  token = (await server.enroll()).token;
});
afterAll(async () => server.stop());

const png = () => image('png');
const project = async (t = token) => (await server.request('GET', '/api/v1/project', { token: t })).json();
const valid = (overrides: Record<string, unknown> = {}) => ({
  filename: 'a.png',
  content_type: 'image/png',
  bytes: 10,
  sha256: 'a'.repeat(64),
  ...overrides,
});

describe('POST /api/v1/media/uploads', () => {
  it('returns an upload session carrying the method and every header, and reserves the bytes', async () => {
    const { token: t } = await server.enroll();
    const bytes = await png();
    const res = await server.request('POST', '/api/v1/media/uploads', {
      token: t,
      json: { filename: 'lobby.png', content_type: 'image/png', bytes: bytes.length, sha256: sha256(bytes) },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const session = res.json();
    expect(Object.keys(session).sort()).toEqual(
      ['expires_at', 'headers', 'id', 'method', 'operation', 'upload_url'].sort(),
    );
    expect(session.id).toMatch(/^upl_/);
    expect(session.method).toBe('PUT');
    expect(session.headers).toEqual({ 'Content-Type': 'image/png', 'Content-Length': String(bytes.length) });
    expect(session.operation).toMatchObject({ kind: 'media.upload', state: 'receiving' });
    expect(Date.parse(session.expires_at) - server.clock.now()).toBe(UPLOAD_URL_TTL_MS);
    expect(new URL(session.upload_url).origin).toBe(server.origin);
    expect((await project(t)).reserved_bytes).toBe(bytes.length);
    const op = await server.request('GET', `/api/v1/operations/${session.operation.id}`, { token: t });
    expect(op.json().state).toBe('receiving');
  });

  it('requires an Idempotency-Key and replays an exact retry without reserving twice', async () => {
    const { token: t } = await server.enroll();
    expect((await server.request('POST', '/api/v1/media/uploads', { token: t, json: valid() })).status).toBe(400);
    const key = randomKey();
    const first = await server.request('POST', '/api/v1/media/uploads', {
      token: t,
      json: valid(),
      idempotencyKey: key,
    });
    const again = await server.request('POST', '/api/v1/media/uploads', {
      token: t,
      json: valid(),
      idempotencyKey: key,
    });
    expect(again.status).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect((await project(t)).reserved_bytes).toBe(10);
  });

  it.each([
    ['filename', { filename: undefined }],
    ['filename', { filename: '' }],
    ['filename', { filename: 'x'.repeat(256) }],
    ['filename', { filename: 'line\nbreak.png' }],
    ['source_filename', { source_filename: '' }],
    ['source_filename', { source_filename: 'photos/a.png' }],
    ['source_filename', { source_filename: 's'.repeat(256) }],
    ['content_type', { content_type: 'image/bmp' }],
    ['content_type', { content_type: undefined }],
    ['bytes', { bytes: 0 }],
    ['bytes', { bytes: 1_073_741_825 }],
    ['bytes', { bytes: 1.5 }],
    ['bytes', { bytes: '10' }],
    ['bytes', { content_type: 'image/gif', bytes: 20_971_521 }],
    ['sha256', { sha256: 'A'.repeat(64) }],
    ['sha256', { sha256: 'a'.repeat(63) }],
    ['tag', { tag: 'two words' }],
    ['tag', { tag: 't'.repeat(33) }],
    ['surprise', { surprise: true }],
  ])('refuses a bad %s with invalid_request naming it', async (field, overrides) => {
    const res = await server.request('POST', '/api/v1/media/uploads', {
      token,
      json: valid(overrides),
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    expect(res.json().code).toBe('invalid_request');
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('accepts the boundaries: 255-character names, a 20 MiB image, a 1 GiB video', async () => {
    const { token: t } = await server.enroll();
    for (const overrides of [
      { filename: 'é'.repeat(255), source_filename: 'ß'.repeat(255), tag: 'T'.repeat(32) },
      { content_type: 'image/jpeg', bytes: 20_971_520 },
    ]) {
      const res = await server.request('POST', '/api/v1/media/uploads', {
        token: t,
        json: valid(overrides),
        idempotencyKey: randomKey(),
      });
      expect(res.status, res.text).toBe(201);
    }
    const { token: t2 } = await server.enroll();
    const big = await server.request('POST', '/api/v1/media/uploads', {
      token: t2,
      json: valid({ content_type: 'video/mp4', bytes: 1_073_741_824 }),
      idempotencyKey: randomKey(),
    });
    expect(big.status, big.text).toBe(201);
  });

  it('takes source_filename and tag only from a project bearer (Model P)', async () => {
    const { token: account } = await server.createAccount();
    for (const field of ['tag', 'source_filename']) {
      const res = await server.request('POST', '/api/v1/media/uploads', {
        token: account,
        json: valid({ [field]: 'x1' }),
        idempotencyKey: randomKey(),
      });
      expect(res.status).toBe(400);
      expect(res.json().errors[0]).toMatchObject({ field, code: 'unknown_field' });
    }
    expect(
      (
        await server.request('POST', '/api/v1/media/uploads', {
          token: account,
          json: valid(),
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(201);
  });

  it('derives the stored filename from source_filename and keeps the original verbatim', async () => {
    const bytes = await image('webp');
    const media = await uploadReady(server, token, bytes, 'image/webp', {
      filename: 'converted.webp',
      source_filename: 'Holiday Photo.HEIC',
    });
    expect(media.filename).toBe('Holiday Photo.webp');
    expect(media.source_filename).toBe('Holiday Photo.HEIC');
  });

  it('admits 20 declarations per minute per project, then rate_limited', async () => {
    const { token: t } = await server.enroll();
    for (let i = 0; i < 20; i++)
      expect(
        (
          await server.request('POST', '/api/v1/media/uploads', {
            token: t,
            json: valid(),
            idempotencyKey: randomKey(),
          })
        ).status,
      ).toBe(201);
    const limited = await server.request('POST', '/api/v1/media/uploads', {
      token: t,
      json: valid(),
      idempotencyKey: randomKey(),
    });
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit-policy']).toContain('"media-upload-admission";q=20;w=60');
    expect(limited.headers['retry-after']).toBeDefined();
  });
});

describe('signed PUT to private storage', () => {
  it('stores the bytes without a bearer, authorized only by the signature', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    const res = await put(server, declared.session, bytes);
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(`"${sha256(bytes)}"`);
  });

  it('refuses a second PUT: the URL authorizes exactly one', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    expect((await put(server, declared.session, bytes)).status).toBe(200);
    const again = await put(server, declared.session, bytes);
    expect(again.status).toBe(403);
    expect(again.json().code).toBe('forbidden');
    expect(again.text).not.toContain(new URL(declared.session.upload_url).searchParams.get('signature')!);
  });

  it('lets exactly one of many concurrent PUTs of one URL store its bytes', async () => {
    const bytes = Buffer.concat([await png(), Buffer.alloc(300_000, 3)]);
    const declared = await declare(server, token, bytes, 'image/png');
    // Every PUT that gets as far as looking for the object waits there for the others (or 300 ms),
    // so they all overlap in the window between the checks and the write.
    const blobs = server.services.blobs;
    const stat = blobs.stat.bind(blobs);
    let waiting: (() => void)[] = [];
    blobs.stat = async (key) => {
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length === 16) for (const go of waiting.splice(0)) go();
        setTimeout(resolve, 300);
      });
      return stat(key);
    };
    let answers;
    try {
      answers = await Promise.all(Array.from({ length: 16 }, () => put(server, declared.session, bytes)));
    } finally {
      blobs.stat = stat;
      waiting = [];
    }
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 409 || s === 403)).toBe(true);
    const key = `media/${new URL(declared.session.upload_url).pathname.split('/').pop()}`;
    expect(sha256(Buffer.concat(await server.services.blobs.read(key).toArray()))).toBe(sha256(bytes));
    // The refused ones removed nothing: the commit finds the bytes.
    expect((await commit(server, token, declared)).status).toBe(202);
  });

  it.each([
    [
      'signature',
      (u: URL) =>
        u.searchParams.set(
          'signature',
          u.searchParams.get('signature')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
        ),
    ],
    ['bytes', (u: URL) => u.searchParams.set('bytes', String(Number(u.searchParams.get('bytes')) + 1))],
    ['content_type', (u: URL) => u.searchParams.set('content_type', 'image/gif')],
    ['expires', (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600_000))],
    ['object key', (u: URL) => (u.pathname = u.pathname.replace(/med_[^/]+$/, 'med_AAAAAAAAAAAAAAAAAAAAAA'))],
    ['missing signature', (u: URL) => u.searchParams.delete('signature')],
  ])('refuses an altered URL (%s) with 403 and stores nothing', async (_what, alter) => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    const url = new URL(declared.session.upload_url);
    alter(url);
    const headers = {
      ...declared.session.headers,
      'Content-Type': url.searchParams.get('content_type') ?? 'image/png',
      'Content-Length': url.searchParams.get('bytes') ?? String(bytes.length),
    };
    const res = await put(
      server,
      declared.session,
      Buffer.alloc(Number(headers['Content-Length'])),
      headers,
      url.toString(),
    );
    expect(res.status).toBe(403);
    expect(res.json().code).toBe('forbidden');
    expect((await put(server, declared.session, bytes)).status).toBe(200);
  });

  it('refuses an expired URL', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    server.clock.advance(UPLOAD_URL_TTL_MS);
    try {
      const res = await put(server, declared.session, bytes);
      expect(res.status).toBe(403);
      expect(res.json().detail).toContain('expired');
    } finally {
      server.clock.advance(-UPLOAD_URL_TTL_MS);
    }
  });

  it.each([
    ['shorter', -1],
    ['longer', 1],
  ])('refuses a %s Content-Length than declared, naming the header', async (_what, delta) => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    const body = Buffer.concat([bytes, Buffer.alloc(1)]).subarray(0, bytes.length + delta);
    const res = await put(server, declared.session, body, {
      'Content-Type': 'image/png',
      'Content-Length': String(body.length),
    });
    expect(res.status).toBe(400);
    expect(res.json().errors[0].field).toBe('Content-Length');
  });

  it('refuses another Content-Type than declared', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    const res = await put(server, declared.session, bytes, {
      ...declared.session.headers,
      'Content-Type': 'image/jpeg',
    });
    expect(res.status).toBe(400);
    expect(res.json().errors[0].field).toBe('Content-Type');
  });

  it('refuses a chunked body without Content-Length', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    const res = await put(server, declared.session, Readable.from([bytes]), { 'Content-Type': 'image/png' });
    expect(res.status).toBe(400);
    expect(res.json().errors[0].field).toBe('Content-Length');
  });

  it('stores nothing from a truncated body, and the URL still works afterwards', async () => {
    const bytes = Buffer.concat([await png(), Buffer.alloc(200_000, 7)]);
    const declared = await declare(server, token, bytes, 'image/png');
    const target = new URL(declared.session.upload_url);
    await new Promise<void>((resolve) => {
      const req = server.rawRequest(
        'PUT',
        target.pathname + target.search,
        { headers: declared.session.headers },
        () => undefined,
      );
      req.on('error', () => resolve());
      req.write(bytes.subarray(0, 1000), () => setTimeout(() => req.destroy(), 50));
      req.on('close', () => resolve());
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(
      await server.services.blobs.stat(`media/${new URL(declared.session.upload_url).pathname.split('/').pop()}`),
    ).toBeUndefined();
    expect((await commit(server, token, declared)).status).toBe(409);
    expect((await put(server, declared.session, bytes)).status).toBe(200);
  });

  it('never stores more than the declared length: bytes after it are the next request, not body', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    const target = new URL(declared.session.upload_url);
    const head = `PUT ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: image/png\r\nContent-Length: ${bytes.length}\r\n\r\n`;
    const answer = await new Promise<string>((resolve) => {
      const next = `GET /.health HTTP/1.1\r\nHost: ${target.host}\r\nConnection: close\r\n\r\n`;
      const socket = net.connect(server.port, '127.0.0.1', () =>
        socket.write(Buffer.concat([Buffer.from(head), bytes, Buffer.from(next)])),
      );
      let text = '';
      socket.on('data', (d) => (text += d));
      socket.on('close', () => resolve(text));
    });
    expect(answer.startsWith('HTTP/1.1 200')).toBe(true);
    expect(answer).toContain('{"status":"alive"}');
    const key = `media/${target.pathname.split('/').pop()}`;
    expect((await server.services.blobs.stat(key))?.bytes).toBe(bytes.length);
  });

  it('refuses the PUT of a cancelled upload, whose reservation is released', async () => {
    const { token: t } = await server.enroll();
    const bytes = await png();
    const declared = await declare(server, t, bytes, 'image/png');
    const cancelled = await server.request('POST', `/api/v1/operations/${declared.session.operation.id}/cancel`, {
      token: t,
      idempotencyKey: randomKey(),
    });
    expect(cancelled.json().state).toBe('cancelled');
    expect((await project(t)).reserved_bytes).toBe(0);
    const res = await put(server, declared.session, bytes);
    expect(res.status).toBe(403);
    expect(res.json().detail).toContain('cancelled');
  });
});

describe('POST /api/v1/media/uploads/{id}/commit and verification', () => {
  it.each([
    ['image/png', () => image('png', 64, 48), { kind: 'image', width: 64, height: 48 }],
    ['image/jpeg', () => image('jpeg', 33, 17), { kind: 'image', width: 33, height: 17 }],
    ['image/webp', () => image('webp', 20, 30), { kind: 'image', width: 20, height: 30 }],
    ['image/gif', () => image('gif', 12, 9), { kind: 'image', width: 12, height: 9 }],
    [
      'video/mp4',
      () => video('mp4', { width: 320, height: 240, seconds: 3 }),
      { kind: 'video', width: 320, height: 240, duration_ms: 3000, codecs: 'avc1.42001f' },
    ],
    [
      'video/webm',
      () => video('webm', { width: 640, height: 360, seconds: 2 }),
      { kind: 'video', width: 640, height: 360, duration_ms: 1900, codecs: 'vp8' },
    ],
    ['audio/mpeg', async () => mp3(100), { kind: 'audio', duration_ms: mp3DurationMs(100), codecs: 'mp3' }],
  ] as const)('verifies and publishes %s with what players need to know', async (contentType, make, expected) => {
    const { token: t } = await server.enroll();
    const bytes = await make();
    const { declared, op, mediaId } = await upload(server, t, bytes, contentType);
    expect(op).toMatchObject({
      state: 'succeeded',
      kind: 'media.upload',
      result: { media_id: expect.stringMatching(/^med_/) },
    });
    const res = await server.request('GET', `/api/v1/media/${mediaId}`, { token: t });
    expect(res.headers.etag).toBe('"1"');
    const media = res.json();
    expect(media).toEqual({
      id: mediaId,
      filename: declared.declaration.filename,
      content_type: contentType,
      operation_id: declared.session.operation.id,
      sha256: sha256(bytes),
      bytes: bytes.length,
      revision: 1,
      state: 'ready',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      ...expected,
    });
    const p = await project(t);
    expect([p.used_bytes, p.reserved_bytes]).toEqual([bytes.length, 0]);
  });

  it('reports the displayed size of an EXIF-rotated JPEG', async () => {
    const bytes = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#000' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const media = await uploadReady(server, token, bytes, 'image/jpeg');
    expect([media.width, media.height]).toEqual([20, 40]);
  });

  it.each([
    ['a PNG declared as JPEG', () => image('png'), 'image/jpeg', 'content_type'],
    ['a WebM declared as MP4', () => video('webm'), 'video/mp4', 'content_type'],
    ['an MP4 declared as WebM', () => video('mp4'), 'video/webm', 'content_type'],
    ['noise declared as MP3', async () => Buffer.alloc(5000, 0x41), 'audio/mpeg', 'content_type'],
    ['a GIF declared as WebP', () => image('gif'), 'image/webp', 'content_type'],
  ] as const)(
    'fails %s, releasing the reservation and publishing nothing',
    async (_what, make, declaredType, field) => {
      const { token: t } = await server.enroll();
      const bytes = await make();
      const { op, declared } = await upload(server, t, bytes, declaredType);
      expect(op.state).toBe('failed');
      expect(op.error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(op.error.errors[0].field).toBe(field);
      const p = await project(t);
      expect([p.used_bytes, p.reserved_bytes]).toEqual([0, 0]);
      expect((await server.request('GET', '/api/v1/media', { token: t })).json().items).toEqual([]);
      const key = `media/${new URL(declared.session.upload_url).pathname.split('/').pop()}`;
      // The failed run discards its staged bytes after it records the outcome: by then, not at once.
      await vi.waitFor(async () => expect(await server.services.blobs.stat(key)).toBeUndefined(), {
        timeout: 5000,
        interval: 10,
      });
    },
  );

  it('fails bytes whose SHA-256 differs from the declaration', async () => {
    const { token: t } = await server.enroll();
    const bytes = await png();
    const other = Buffer.from(bytes);
    other[other.length - 1] ^= 0xff;
    const declared = await declare(server, t, other, 'image/png');
    expect((await put(server, declared.session, bytes)).status).toBe(200);
    expect((await commit(server, t, declared)).status).toBe(202);
    await server.services.operations.idle();
    const op = (
      await server.request('GET', `/api/v1/operations/${declared.session.operation.id}`, { token: t })
    ).json();
    expect(op.state).toBe('failed');
    expect(op.error.errors[0].field).toBe('sha256');
    expect((await project(t)).reserved_bytes).toBe(0);
  });

  it('requires the exact declaration, naming each field that differs', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    await put(server, declared.session, bytes);
    const res = await commit(server, token, declared, {
      content_type: 'image/png',
      bytes: bytes.length + 1,
      sha256: 'b'.repeat(64),
    });
    expect(res.status).toBe(400);
    expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual(['bytes', 'sha256']);
    const extra = await commit(server, token, declared, {
      content_type: 'image/png',
      bytes: bytes.length,
      sha256: sha256(bytes),
      filename: 'x',
    });
    expect(extra.status).toBe(400);
    expect(extra.json().errors[0]).toMatchObject({ field: 'filename', code: 'unknown_field' });
    expect(
      (
        await server.request('POST', `/api/v1/media/uploads/${declared.session.id}/commit`, {
          token,
          json: { content_type: 'image/png', bytes: bytes.length, sha256: sha256(bytes) },
        })
      ).status,
    ).toBe(400);
  });

  it('refuses a commit before the PUT finished', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    const res = await commit(server, token, declared);
    expect(res.status).toBe(409);
    expect(res.json()).toMatchObject({ code: 'resource_conflict', detail: expect.stringContaining('PUT') });
  });

  it('answers 202 with the operation, which moves to queued', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    await put(server, declared.session, bytes);
    const res = await commit(server, token, declared);
    expect(res.status).toBe(202);
    expect(res.json()).toMatchObject({ id: declared.session.operation.id, kind: 'media.upload' });
    expect(['queued', 'running', 'succeeded']).toContain(res.json().state);
    await server.services.operations.idle();
  });

  it('runs the verification once for concurrent commits of one upload', async () => {
    const { token: t } = await server.enroll();
    const bytes = await png();
    const declared = await declare(server, t, bytes, 'image/png');
    await put(server, declared.session, bytes);
    const answers = await Promise.all([1, 2, 3, 4].map(() => commit(server, t, declared)));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.json().id))).toEqual(new Set([declared.session.operation.id]));
    await server.services.operations.idle();
    const events = await server.services.store.db
      .selectFrom('events')
      .select('type')
      .where('operation_id', '=', declared.session.operation.id)
      .execute();
    expect(events.filter((e) => e.type === 'media.ready')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'operation.succeeded')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'media.upload_committed')).toHaveLength(1);
    const p = await project(t);
    expect([p.used_bytes, p.reserved_bytes]).toEqual([bytes.length, 0]);
  });

  it("answers not_found for another project's upload", async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    const { token: other } = await server.enroll();
    expect((await commit(server, other, declared)).status).toBe(404);
  });

  it('expires uploads never committed: the operation fails and the reservation is released', async () => {
    const { token: t } = await server.enroll();
    const bytes = await png();
    const declared = await declare(server, t, bytes, 'image/png');
    await put(server, declared.session, bytes);
    expect((await project(t)).reserved_bytes).toBe(bytes.length);
    server.clock.advance(UPLOAD_COMMIT_WINDOW_MS);
    try {
      await server.services.housekeeping.runAll();
    } finally {
      server.clock.advance(-UPLOAD_COMMIT_WINDOW_MS);
    }
    const op = (
      await server.request('GET', `/api/v1/operations/${declared.session.operation.id}`, { token: t })
    ).json();
    expect(op).toMatchObject({ state: 'failed', error: { code: 'resource_conflict' } });
    expect((await project(t)).reserved_bytes).toBe(0);
    const late = await commit(server, t, declared);
    expect(late.status).toBe(409);
    expect(late.json().detail).toContain('expired');
    const events = await server.services.store.db
      .selectFrom('events')
      .select(['type', 'details'])
      .where('operation_id', '=', declared.session.operation.id)
      .execute();
    expect(events.filter((e) => e.type === 'media.upload_failed').map((e) => JSON.parse(e.details!).state)).toEqual([
      'expired',
    ]);
  });

  it('keeps no signed URL or signature in the server log', async () => {
    const bytes = await png();
    const declared = await declare(server, token, bytes, 'image/png');
    await put(server, declared.session, Buffer.alloc(3), { 'Content-Type': 'image/png', 'Content-Length': '3' });
    await put(server, declared.session, bytes);
    const signature = new URL(declared.session.upload_url).searchParams.get('signature')!;
    const log = server.logText();
    expect(log).toContain('/private-storage/');
    expect(log).not.toContain(signature);
    expect(log).not.toContain('signature=');
  });

  it('logged no unexpected error for any refused, truncated or failed upload in this file', () => {
    expect(server.logText()).not.toContain('unexpected error');
  });
});

describe('uploads across a restart', () => {
  it('keeps a receiving upload open: PUT and commit work after the server restarts', async () => {
    let s = await TestServer.start();
    try {
      const { token: t } = await s.enroll();
      const bytes = await video('mp4');
      const declared = await declare(s, t, bytes, 'video/mp4');
      s = await s.restart();
      expect((await put(s, declared.session, bytes)).status).toBe(200);
      expect((await commit(s, t, declared)).status).toBe(202);
      await s.services.operations.idle();
      const op = (await s.request('GET', `/api/v1/operations/${declared.session.operation.id}`, { token: t })).json();
      expect(op.state).toBe('succeeded');
    } finally {
      await s.stop();
    }
  });
});
