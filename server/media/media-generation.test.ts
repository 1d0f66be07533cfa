import http from 'node:http';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GENERATED_SIZES, GENERATION_REFERENCE_MAX_BYTES } from '../../sdk/contract/media';
import { TestClock } from '../clock';
import { noReferences, type MediaChange } from '../references';
import { MILLIS_PER_CREDIT } from '../tenants/credits';
import { TestServer, randomKey } from '../testing/harness';
import { image, uploadReady } from './media.fixtures';
import { FRAMING_REQUIREMENTS } from './media-generation';

const VENDOR_KEY = 'sk-test-vendor-key-0123456789';

/** A local stand-in for an OpenAI-compatible images API on 127.0.0.1. */
interface FakeVendor {
  url: string;
  requests: { path: string; authorization?: string; contentType?: string; json?: any; raw: Buffer }[];
  /** What the next answers are: an image of this size, an HTTP failure, or a hold until released. */
  mode: { kind: 'image'; width: number; height: number } | { kind: 'status'; status: number } | { kind: 'garbage' };
  hold?: Promise<void>;
  close(): Promise<void>;
}

async function startVendor(): Promise<FakeVendor> {
  const vendor: Partial<FakeVendor> = { requests: [], mode: { kind: 'image', width: 1536, height: 1024 } };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const contentType = req.headers['content-type'];
    vendor.requests!.push({
      path: req.url!,
      authorization: req.headers.authorization,
      contentType,
      json: contentType === 'application/json' ? JSON.parse(raw.toString()) : undefined,
      raw,
    });
    await vendor.hold;
    const mode = vendor.mode!;
    if (mode.kind === 'status') {
      res
        .writeHead(mode.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `vendor says no; echo ${VENDOR_KEY}` } }));
      return;
    }
    const png =
      mode.kind === 'garbage'
        ? Buffer.from('not an image at all')
        : await sharp({ create: { width: mode.width, height: mode.height, channels: 3, background: '#c04020' } })
            .png()
            .toBuffer();
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ created: 1, data: [{ b64_json: png.toString('base64') }], usage: { total_tokens: 10 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  vendor.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  vendor.close = () => new Promise((resolve) => server.close(() => resolve()));
  return vendor as FakeVendor;
}

let vendor: FakeVendor;
/** What the playlists seam was told. */
const changes: MediaChange[] = [];
let server: TestServer;
let token: string;
let projectId: string;

beforeAll(async () => {
  vendor = await startVendor();
  server = await TestServer.start({
    clock: new TestClock('2026-11-21T12:00:00Z'),
    config: { imageVendorUrl: vendor.url, imageVendorKey: VENDOR_KEY, imageVendorModel: 'image-model-x' },
    beforeListen: (services) => {
      services.references = {
        ...noReferences,
        mediaChanged: async (_work, _tenantId, change) => void changes.push(change),
      };
    },
  });
});
afterAll(async () => {
  await server.stop();
  await vendor.close();
});
beforeEach(async () => {
  ({ token, projectId } = await server.enroll());
  vendor.requests = [];
  vendor.mode = { kind: 'image', width: 1536, height: 1024 };
  vendor.hold = undefined;
});
afterEach(() => server.clock.set('2026-11-21T12:00:00Z'));

const generate = (body: Record<string, unknown>, t = token, key = randomKey()) =>
  server.request('POST', '/api/v1/media/generations', { token: t, json: body, idempotencyKey: key });
const creditMillis = async () =>
  (
    await server.services.store.db
      .selectFrom('tenants')
      .select('credit_millis')
      .where('id', '=', projectId)
      .executeTakeFirstOrThrow()
  ).credit_millis;

describe('POST /api/v1/media/generations', () => {
  it('answers the ready media and usage, never the prompt, bytes, keys or vendor data', async () => {
    const before = await creditMillis();
    const prompt = 'A calm harbour at dawn, watercolour';
    const res = await generate({ prompt, tag: 'harbour' });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.etag).toBe('"1"');
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^med_/),
      filename: `generated-16x9-${body.id.slice(-8)}.webp`,
      kind: 'image',
      content_type: 'image/webp',
      operation_id: expect.stringMatching(/^op_/),
      sha256: expect.stringMatching(/^[a-f0-9]{64}$/),
      bytes: expect.any(Number),
      width: 1920,
      height: 1080,
      tag: 'harbour',
      revision: 1,
      state: 'ready',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      usage: { quality: 'medium', credits: 63, usd: '0.063' },
    });
    for (const secret of [prompt, VENDOR_KEY, 'b64_json', 'private-storage', 'image-model-x'])
      expect(res.text).not.toContain(secret);
    // The request credit plus the vendor cost.
    expect(before - (await creditMillis())).toBe((1 + 63) * MILLIS_PER_CREDIT);
    const op = (await server.request('GET', `/api/v1/operations/${body.operation_id}`, { token })).json();
    expect(op).toMatchObject({ kind: 'media.generation', state: 'succeeded', result: { media_id: body.id } });
    const listed = (await server.request('GET', '/api/v1/media?tag=harbour', { token })).json().items;
    expect(listed.map((m: { id: string }) => m.id)).toEqual([body.id]);
    const p = (await server.request('GET', '/api/v1/project', { token })).json();
    expect(p.used_bytes).toBe(body.bytes);
    expect(changes.at(-1)).toEqual({ mediaId: body.id, tags: ['harbour'] });
  });

  it('appends the framing requirements for the vendor and stores the prompt unchanged', async () => {
    const prompt = 'Menu board with three coffees';
    const res = await generate({ prompt, quality: 'high', aspect_ratio: '9:16' });
    expect(res.status).toBe(201);
    expect(vendor.requests).toHaveLength(1);
    const sent = vendor.requests[0]!;
    expect(sent.path).toBe('/v1/images/generations');
    expect(sent.authorization).toBe(`Bearer ${VENDOR_KEY}`);
    expect(sent.json).toEqual({
      model: 'image-model-x',
      prompt: `${prompt}\n\n${FRAMING_REQUIREMENTS}`,
      n: 1,
      size: '1024x1536',
      quality: 'high',
    });
    for (const word of [
      'edge-to-edge',
      'television',
      'monitor',
      'device',
      'bezel',
      'frame',
      'border',
      'mounting',
      'room',
      'shadow',
      'photograph of an installed sign',
    ]) {
      expect(FRAMING_REQUIREMENTS).toContain(word);
    }
    const row = await server.services.store.db
      .selectFrom('media_generations')
      .selectAll()
      .where('media_id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      prompt,
      state: 'succeeded',
      quality: 'high',
      aspect_ratio: '9:16',
      credits: 250,
      usd: '0.25',
    });
    expect(res.json().usage).toEqual({ quality: 'high', credits: 250, usd: '0.25' });
  });

  it.each(Object.entries(GENERATED_SIZES))('stores %s as lossy WebP at exactly %j', async (aspect, size) => {
    const res = await generate({ prompt: 'Stripes', aspect_ratio: aspect, quality: 'low' });
    expect(res.status).toBe(201);
    expect(res.json()).toMatchObject({
      width: size.width,
      height: size.height,
      filename: expect.stringMatching(new RegExp(`^generated-${aspect.replace(':', 'x')}-[A-Za-z0-9_-]{8}\\.webp$`)),
    });
    const bytes = (await server.request('GET', `/api/v1/media/${res.json().id}/content`, { token })).body;
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', size.width, size.height]);
    // Lossy WebP carries a 'VP8 ' bitstream chunk; lossless would be 'VP8L'.
    expect(bytes.includes(Buffer.from('VP8 '))).toBe(true);
    expect(bytes.includes(Buffer.from('VP8L'))).toBe(false);
  });

  it('allows one in-flight generation per project; a parallel one is rate_limited without RateLimit headers', async () => {
    let release!: () => void;
    vendor.hold = new Promise((r) => (release = r));
    const first = generate({ prompt: 'One' });
    for (let i = 0; i < 100 && vendor.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const second = await generate({ prompt: 'Two' });
    expect(second.status).toBe(429);
    expect(second.json().code).toBe('rate_limited');
    expect(second.headers['retry-after']).toBeDefined();
    expect(second.headers.ratelimit).toBeUndefined();
    // Another project is not held up.
    const { token: other } = await server.enroll();
    const otherAnswer = generate({ prompt: 'Elsewhere' }, other);
    release();
    expect((await first).status).toBe(201);
    expect((await otherAnswer).status).toBe(201);
    expect((await generate({ prompt: 'Three' })).status).toBe(201);
  });

  it('holds one in-flight generation per project when the requests arrive together', async () => {
    let release!: () => void;
    vendor.hold = new Promise((r) => (release = r));
    const answers = Array.from({ length: 4 }, (_, i) => generate({ prompt: `Together ${i}` }));
    for (let i = 0; i < 100 && vendor.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100)); // time for any other to reach the vendor too
    expect(vendor.requests).toHaveLength(1);
    release();
    expect((await Promise.all(answers)).map((a) => a.status).sort()).toEqual([201, 429, 429, 429]);
  });

  it('refuses with payment_required when the balance cannot cover twice the vendor cost', async () => {
    server.clock.set('2027-03-01T00:00:00Z'); // floor 0 from 2027-01-01
    await server.request('GET', '/api/v1/project', { token }); // the month's grant lands first
    // high 16:9 costs 250 credits: 500 needed above the floor, plus this request's credit.
    await server.services.store.db
      .updateTable('tenants')
      .set({ credit_millis: 500 * MILLIS_PER_CREDIT })
      .where('id', '=', projectId)
      .execute();
    const refused = await generate({ prompt: 'Expensive', quality: 'high' });
    expect(refused.status).toBe(402);
    expect(refused.json().code).toBe('payment_required');
    expect(vendor.requests).toHaveLength(0);
    await server.services.store.db
      .updateTable('tenants')
      .set({ credit_millis: 501 * MILLIS_PER_CREDIT })
      .where('id', '=', projectId)
      .execute();
    expect((await generate({ prompt: 'Expensive', quality: 'high' })).status).toBe(201);
  });

  it('refuses with payment_required at the floor (admission needs 1 credit above it)', async () => {
    server.clock.set('2026-12-01T00:00:00Z');
    await server.request('GET', '/api/v1/project', { token });
    // Before 2027 the floor is -1,000,000 credits: 1 credit left above it after this request's debit.
    await server.services.store.db
      .updateTable('tenants')
      .set({ credit_millis: (-1_000_000 + 1) * MILLIS_PER_CREDIT })
      .where('id', '=', projectId)
      .execute();
    const res = await generate({ prompt: 'Broke' });
    expect(res.status).toBe(402);
    expect(res.json().detail).toContain('floor');
  });

  it('answers dependency_unavailable without vendor data when the vendor fails, and charges only the request', async () => {
    vendor.mode = { kind: 'status', status: 503 };
    const before = await creditMillis();
    const res = await generate({ prompt: 'Fails' });
    expect(res.status).toBe(500);
    expect(res.json().code).toBe('dependency_unavailable');
    expect(res.headers['retry-after']).toBe('5');
    expect(res.text).not.toContain(VENDOR_KEY);
    expect(res.text).not.toContain('vendor says no');
    expect(before - (await creditMillis())).toBe(MILLIS_PER_CREDIT);
    expect((await server.request('GET', '/api/v1/media', { token })).json().items).toEqual([]);
    // The slot is free again.
    vendor.mode = { kind: 'image', width: 1024, height: 1024 };
    expect((await generate({ prompt: 'Works now', aspect_ratio: '1:1' })).status).toBe(201);
  });

  it('answers dependency_unavailable when the vendor sends something that is not an image', async () => {
    vendor.mode = { kind: 'garbage' };
    const res = await generate({ prompt: 'Garbage' });
    expect(res.status).toBe(500);
    expect(res.json().code).toBe('dependency_unavailable');
  });

  it('answers invalid_request naming the prompt when the vendor refuses it', async () => {
    vendor.mode = { kind: 'status', status: 400 };
    const res = await generate({ prompt: 'Refused' });
    expect(res.status).toBe(400);
    expect(res.json().errors[0].field).toBe('prompt');
    expect(res.text).not.toContain('vendor says no');
  });

  it('sends ready image references to the edits endpoint; unknown references are not_found', async () => {
    const ref = await uploadReady(server, token, await image('png', 40, 30), 'image/png');
    const res = await generate({ prompt: 'Like this, but blue', references: [ref.id] });
    expect(res.status, res.text).toBe(201);
    const sent = vendor.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.contentType).toMatch(/^multipart\/form-data/);
    expect(sent.raw.includes(Buffer.from('Like this, but blue'))).toBe(true);
    expect(sent.raw.includes(Buffer.from('name="image[]"'))).toBe(true);
    const missing = await generate({ prompt: 'x', references: ['med_doesnotexist'] });
    expect(missing.status).toBe(404);
    const { token: other } = await server.enroll();
    expect((await generate({ prompt: 'x', references: [ref.id] }, other)).status).toBe(404);
  });

  it('refuses a reference image larger than vendors take, before reading it into memory', async () => {
    const ref = await uploadReady(server, token, await image('png', 40, 30), 'image/png');
    const tooLarge = GENERATION_REFERENCE_MAX_BYTES + 1;
    // A ready image's size is its verified size; this one stands for a 50 MiB upload.
    await server.services.store.db.updateTable('media').set({ bytes: tooLarge }).where('id', '=', ref.id).execute();
    const sent = vendor.requests.length;
    const res = await generate({ prompt: 'Like this', references: [ref.id] });
    expect(res.status, res.text).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ field: 'references.0', code: 'too_large' });
    expect(vendor.requests.length).toBe(sent);
    await server.services.store.db
      .updateTable('media')
      .set({ bytes: GENERATION_REFERENCE_MAX_BYTES })
      .where('id', '=', ref.id)
      .execute();
    expect((await generate({ prompt: 'Like this', references: [ref.id] })).status).toBe(201);
  });

  it.each([
    ['prompt', { prompt: '' }],
    ['prompt', { prompt: 'p'.repeat(4001) }],
    ['prompt', {}],
    ['aspect_ratio', { prompt: 'x', aspect_ratio: '21:9' }],
    ['quality', { prompt: 'x', quality: 'ultra' }],
    ['tag', { prompt: 'x', tag: 'no spaces' }],
    ['references', { prompt: 'x', references: ['med_a', 'med_a'] }],
    ['references', { prompt: 'x', references: ['med_a', 'med_b', 'med_c', 'med_d', 'med_e'] }],
    ['references.0', { prompt: 'x', references: ['scr_a'] }],
    ['surprise', { prompt: 'x', surprise: 1 }],
  ])('refuses a bad %s', async (field, body) => {
    const res = await generate(body);
    expect(res.status).toBe(400);
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(vendor.requests).toHaveLength(0);
  });

  it('requires an Idempotency-Key and replays an exact retry without generating twice', async () => {
    expect((await server.request('POST', '/api/v1/media/generations', { token, json: { prompt: 'x' } })).status).toBe(
      400,
    );
    const key = randomKey();
    const first = await generate({ prompt: 'Once' }, token, key);
    const again = await generate({ prompt: 'Once' }, token, key);
    expect(again.status).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(vendor.requests).toHaveLength(1);
  });

  it('is a project (Model P) route', async () => {
    const { token: account } = await server.createAccount();
    expect((await generate({ prompt: 'x' }, account)).status).toBe(403);
  });

  it('never logs the vendor key', async () => {
    vendor.mode = { kind: 'status', status: 500 };
    await generate({ prompt: 'Log check' });
    expect(server.logText()).not.toContain(VENDOR_KEY);
  });
});

describe('media generation without a vendor', () => {
  it('answers dependency_unavailable and advertises no generation feature', async () => {
    const s = await TestServer.start();
    try {
      const { token: t } = await s.enroll();
      const res = await s.request('POST', '/api/v1/media/generations', {
        token: t,
        json: { prompt: 'x' },
        idempotencyKey: randomKey(),
      });
      expect(res.status).toBe(500);
      expect(res.json().code).toBe('dependency_unavailable');
      expect(res.headers['retry-after']).toBe('5');
      const features = (await s.request('GET', '/api/v1/capabilities')).json().features;
      expect(features).toMatchObject({ media: true, media_generation: false });
    } finally {
      await s.stop();
    }
  });
});
