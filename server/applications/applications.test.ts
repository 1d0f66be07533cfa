import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import type { Services } from '../services';
import { TestServer, randomKey, type TestResponse } from '../testing/harness';
import { archiveOf, sampleApp, uploadHeadersOf, type ArchiveFixture, type FixtureEntry } from './archive-fixtures';
import { releaseHostLabel } from '../release-host/host-label';
import { packageKey } from './release-package';
import { uploadRunner } from './upload-runner';
import { sweepStagedTrees } from './applications.module';
import { LEASE_MS } from '../operations/worker';
import { TEST_DATABASE_URL } from '../testing/test-database';
import { publishRelease, uploadInput } from './applications';

/** Applications that a "live manifest" references (the runtime's seam, installed for these tests). */
const inUse = new Set<string>();

/** Holds upload operations `running` before publication while `hold` is true. */
const gate = {
  hold: false,
  waiting: new Map<string, () => void>(),
  release(opId: string) {
    this.waiting.get(opId)?.();
    this.waiting.delete(opId);
  },
};

function install(services: Services): void {
  services.references = { ...services.references, applicationInUse: async (_work, _tenant, id) => inUse.has(id) };
  services.operations.register(
    uploadRunner(services, {
      async beforePublish(op, control) {
        if (!gate.hold) return;
        await new Promise<void>((resolve, reject) => {
          gate.waiting.set(op.id, resolve);
          control.signal.addEventListener('abort', () => reject(control.signal.reason), { once: true });
        });
      },
    }),
  );
}

const onPostgres = TEST_DATABASE_URL?.startsWith('postgres') ?? false;

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start({ clock: new TestClock('2026-11-21T12:00:00Z'), beforeListen: install });
});
afterAll(async () => server.stop());

interface UploadOptions {
  token: string;
  /** POST /api/v1/applications/{id}/releases instead of a new application. */
  applicationId?: string;
  headers?: Record<string, string>;
  key?: string;
  ifMatch?: number;
}

function upload(fixture: ArchiveFixture, options: UploadOptions, on: TestServer = server): Promise<TestResponse> {
  const target = options.applicationId
    ? `/api/v1/applications/${options.applicationId}/releases`
    : '/api/v1/applications';
  return on.request('POST', target, {
    token: options.token,
    idempotencyKey: options.key ?? randomKey(),
    ifMatch: options.ifMatch,
    body: fixture.body,
    headers: uploadHeadersOf(fixture.declaration, options.headers),
  });
}

async function operation(token: string, id: string): Promise<any> {
  return (await server.request('GET', `/api/v1/operations/${id}`, { token })).json();
}

async function settled(token: string, id: string): Promise<any> {
  await server.services.operations.idle();
  return operation(token, id);
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function project(token: string): Promise<any> {
  return (await server.request('GET', '/api/v1/project', { token })).json();
}

/** The tenant's application and operation events, oldest first. */
async function eventTypes(tenantId: string): Promise<string[]> {
  const rows = await server.services.store.db
    .selectFrom('events')
    .select('type')
    .where('tenant_id', '=', tenantId)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.type).filter((t) => t.startsWith('application.') || t.startsWith('operation.'));
}

function blobFiles(s: TestServer, under: string): string[] {
  const dir = path.join(s.dataDir, 'blobs', under);
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((p) => fs.statSync(path.join(dir, p)).isFile());
}

async function operationsOf(tenantId: string, on: TestServer = server) {
  return on.services.store.db.selectFrom('operations').selectAll().where('tenant_id', '=', tenantId).execute();
}

/** Starts an upload whose body arrives only when told to. */
function slowUpload(
  fixture: ArchiveFixture,
  token: string,
  on: TestServer = server,
): { body: PassThrough; answer: Promise<TestResponse> } {
  const body = new PassThrough();
  const answer = new Promise<TestResponse>((resolve, reject) => {
    const req = on.rawRequest(
      'POST',
      '/api/v1/applications',
      {
        token,
        idempotencyKey: randomKey(),
        body,
        headers: { ...uploadHeadersOf(fixture.declaration), 'content-length': String(fixture.body.length) },
      },
      (res: http.IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: Buffer.concat(chunks),
            text,
            json: () => JSON.parse(text),
          });
        });
      },
    );
    req.on('error', reject);
  });
  body.write(fixture.body.subarray(0, 16));
  return { body, answer };
}

describe('uploading an application', () => {
  it('accepts the archive with 202, publishes a ready release and counts its bytes', async () => {
    const { token, projectId } = await server.enroll();
    const fixture = archiveOf(sampleApp('lobby'));
    const res = await upload(fixture, {
      token,
      headers: { 'Marquee-Application-Name': 'Lobby board', 'Marquee-SDK-Version': '1' },
    });
    expect(res.status).toBe(202);
    const accepted = res.json();
    expect(accepted).toEqual({
      id: expect.stringMatching(/^app_/),
      release_id: expect.stringMatching(/^rel_/),
      operation_id: expect.stringMatching(/^op_/),
    });
    expect(res.headers.location).toBe(`/api/v1/operations/${accepted.operation_id}`);
    expect(res.headers['ratelimit-policy']).toBe('"application-upload";q=10;w=60');

    const op = await settled(token, accepted.operation_id);
    expect(op).toMatchObject({
      kind: 'application.upload',
      state: 'succeeded',
      result: { application_id: accepted.id, release_id: accepted.release_id },
    });

    const app = await server.request('GET', `/api/v1/applications/${accepted.id}`, { token });
    expect(app.status).toBe(200);
    expect(app.headers.etag).toBe('"2"');
    expect(app.json()).toEqual({
      id: accepted.id,
      name: 'Lobby board',
      revision: 2, // 1 on acceptance, 2 when its first release became the latest ready one
      state: 'ready',
      latest_ready_release: accepted.release_id,
      release_id: accepted.release_id,
      created_at: '2026-11-21T12:00:00.000Z',
      updated_at: '2026-11-21T12:00:00.000Z',
    });
    const list = await server.request('GET', '/api/v1/applications', { token });
    expect(list.json().items.map((a: any) => a.id)).toEqual([accepted.id]);

    const release = await server.services.store.db
      .selectFrom('releases')
      .selectAll()
      .where('id', '=', accepted.release_id)
      .executeTakeFirstOrThrow();
    expect(release).toMatchObject({
      state: 'ready',
      host_label: releaseHostLabel(accepted.release_id),
      sdk_version: '1',
      file_count: 3,
      expanded_bytes: fixture.declaration.expandedBytes,
    });
    expect(release.host_label).toMatch(/^[0-9a-f]{40}$/);
    // The three files, and the webapp package queued at publication.
    await server.services.packageBuilds.idle();
    expect(blobFiles(server, `releases/${accepted.release_id}`).sort()).toEqual(['0', '1', '2', 'package']);
    expect(
      await server.services.store.db
        .selectFrom('release_packages')
        .select('blob_key')
        .where('release_id', '=', accepted.release_id)
        .execute(),
    ).toEqual([{ blob_key: `releases/${accepted.release_id}/package` }]);
    expect(blobFiles(server, '.staging')).toEqual([]);

    expect(await project(token)).toMatchObject({ used_bytes: fixture.declaration.expandedBytes, reserved_bytes: 0 });
    expect(await eventTypes(projectId)).toEqual([
      'application.created',
      'application.published',
      'operation.succeeded',
    ]);
  });

  it('takes an account bearer (Model A) too, and names from the RFC 8187 header', async () => {
    const { token } = await server.createAccount();
    const res = await upload(archiveOf(sampleApp()), {
      token,
      headers: { 'Marquee-Application-Name*': "UTF-8''Caf%C3%A9%20%E2%98%95" },
    });
    expect(res.status).toBe(202);
    await settled(token, res.json().operation_id);
    expect((await server.request('GET', `/api/v1/applications/${res.json().id}`, { token })).json()).toMatchObject({
      name: 'Café ☕',
      state: 'ready',
    });
    // Release uploads are Model P only.
    expect((await upload(archiveOf(sampleApp()), { token, applicationId: res.json().id })).status).toBe(403);
  });

  it('names an application without a name header "Untitled application"', async () => {
    const { token } = await server.enroll();
    const res = await upload(archiveOf(sampleApp()), { token });
    expect((await server.request('GET', `/api/v1/applications/${res.json().id}`, { token })).json().name).toBe(
      'Untitled application',
    );
  });

  it.each([
    ['a missing SHA-256', { 'Marquee-Archive-SHA256': '' }, 'Marquee-Archive-SHA256'],
    ['a file count over 5000', { 'Marquee-File-Count': '5001' }, 'Marquee-File-Count'],
    ['expanded bytes over the limit', { 'Marquee-Expanded-Bytes': '262144001' }, 'Marquee-Expanded-Bytes'],
    [
      'both name headers',
      { 'Marquee-Application-Name': 'a', 'Marquee-Application-Name*': "UTF-8''a" },
      'Marquee-Application-Name',
    ],
    ['a JSON content type', { 'content-type': 'application/json' }, 'Content-Type'],
  ])('refuses %s synchronously with invalid_request naming the header', async (_what, headers, field) => {
    const { token, projectId } = await server.enroll();
    const fixture = archiveOf(sampleApp());
    const sent = uploadHeadersOf(fixture.declaration, headers);
    for (const [k, v] of Object.entries(sent)) if (v === '') delete sent[k];
    const res = await server.request('POST', '/api/v1/applications', {
      token,
      idempotencyKey: randomKey(),
      body: fixture.body,
      headers: sent,
    });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_request', errors: [{ field }] });
    expect(res.json().detail.startsWith(field)).toBe(true);
    expect(await operationsOf(projectId)).toEqual([]);
    expect(await project(token)).toMatchObject({ reserved_bytes: 0 });
  });

  it('refuses a declared Content-Length over 100 MiB before reading the body', async () => {
    const { token } = await server.enroll();
    const fixture = archiveOf(sampleApp());
    const body = new PassThrough();
    body.write(fixture.body); // the rest of the announced 100 MiB never comes
    const res = await new Promise<TestResponse>((resolve, reject) => {
      const req = server.rawRequest(
        'POST',
        '/api/v1/applications',
        {
          token,
          idempotencyKey: randomKey(),
          headers: { ...uploadHeadersOf(fixture.declaration), 'content-length': '104857601' },
          body,
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({
              status: r.statusCode!,
              headers: r.headers,
              body: Buffer.concat(chunks),
              text,
              json: () => JSON.parse(text),
            });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
    });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'Content-Length', code: 'too_large' }],
    });
  });

  it('needs an Idempotency-Key, replays an exact retry and refuses a changed one', async () => {
    const { token, projectId } = await server.enroll();
    const fixture = archiveOf(sampleApp());
    const none = await server.request('POST', '/api/v1/applications', {
      token,
      body: fixture.body,
      headers: uploadHeadersOf(fixture.declaration),
    });
    expect(none.status).toBe(400);
    expect(none.json().errors[0].field).toBe('Idempotency-Key');

    const key = randomKey();
    const first = await upload(fixture, { token, key });
    const again = await upload(fixture, { token, key });
    expect(again.status).toBe(202);
    expect(again.json()).toEqual(first.json());
    expect(again.headers.location).toBe(first.headers.location);
    expect(await operationsOf(projectId)).toHaveLength(1);

    const other = archiveOf(sampleApp('other'));
    const changed = await upload(other, { token, key });
    expect(changed.status).toBe(409);
    expect(changed.json().code).toBe('idempotency_mismatch');
    const renamed = await upload(fixture, { token, key, headers: { 'Marquee-Application-Name': 'x' } });
    expect(renamed.json().code).toBe('idempotency_mismatch');
  });

  it('refuses an upload past the content quota with 413 before reading it', async () => {
    const { token, projectId } = await server.enroll();
    await server.services.store.db
      .updateTable('tenants')
      .set({ content_limit_bytes: 100 })
      .where('id', '=', projectId)
      .execute();
    const res = await upload(archiveOf(sampleApp()), { token });
    expect(res.status).toBe(413);
    expect(res.json()).toMatchObject({ code: 'quota_exceeded', detail: 'content bytes quota exceeded (limit 100)' });
    expect(await operationsOf(projectId)).toEqual([]);
  });

  it('holds the declared bytes as reserved while the body streams', async () => {
    const { token, projectId } = await server.enroll();
    const fixture = archiveOf(sampleApp());
    const { body, answer } = slowUpload(fixture, token);
    const op = await waitFor(async () => (await operationsOf(projectId))[0], 'the receiving operation');
    expect(op.state).toBe('receiving');
    expect(await project(token)).toMatchObject({ reserved_bytes: fixture.declaration.expandedBytes, used_bytes: 0 });
    expect((await operation(token, op.id)).state).toBe('receiving');
    body.end(fixture.body.subarray(16));
    expect((await answer).status).toBe(202);
    await settled(token, op.id);
    expect(await project(token)).toMatchObject({ reserved_bytes: 0, used_bytes: fixture.declaration.expandedBytes });
  });
});

describe('archives the rules refuse', () => {
  const index: FixtureEntry = { name: 'index.html', data: '<!doctype html>' };
  it.each([
    [
      'path traversal',
      archiveOf([index, { name: '../../evil.html', data: 'x' }]),
      'parent_segment',
      /contains a "\.\." segment/,
    ],
    [
      'a symbolic link',
      archiveOf([index, { name: 'etc', type: '2', linkname: '/etc' }]),
      'unsupported_entry',
      /is a symbolic link/,
    ],
    [
      'a SHA-256 mismatch',
      archiveOf([index], { sha256: 'f'.repeat(64) }),
      'sha256_mismatch',
      /not the f{64} declared in Marquee-Archive-SHA256/,
    ],
    [
      'a gzip bomb announced by its header',
      archiveOf([index, { name: 'bomb', size: 2 ** 30 }], { expandedBytes: 1000 }),
      'file_too_large',
      /is 1073741824 bytes/,
    ],
    ['no index.html', archiveOf([{ name: 'main.html', data: 'x' }]), 'missing_entry', /no index\.html at its root/],
  ])(
    'fails the operation for %s, keeps no bytes and gives the reservation back',
    async (_what, fixture, code, detail) => {
      const { token } = await server.enroll();
      const res = await upload(fixture, { token });
      expect(res.status).toBe(202);
      const op = await settled(token, res.json().operation_id);
      expect(op.state).toBe('failed');
      expect(op.error).toMatchObject({ code: 'invalid_request', status: 400, errors: [{ code }] });
      expect(op.error.detail).toMatch(detail);
      const app = (await server.request('GET', `/api/v1/applications/${res.json().id}`, { token })).json();
      expect(app).toMatchObject({ state: 'failed', revision: 1 });
      expect(app.latest_ready_release).toBeUndefined();
      const release = await server.services.store.db
        .selectFrom('releases')
        .select('state')
        .where('id', '=', res.json().release_id)
        .executeTakeFirstOrThrow();
      expect(release.state).toBe('failed');
      expect(blobFiles(server, `releases/${res.json().release_id}`)).toEqual([]);
      expect(blobFiles(server, `.staging/${res.json().operation_id}`)).toEqual([]);
      expect(await project(token)).toMatchObject({ reserved_bytes: 0, used_bytes: 0 });
    },
  );
});

describe('a large archive refused at its first entry', () => {
  it('is answered at once and lets the client finish sending the rest of its body', async () => {
    const { token } = await server.enroll();
    const noise = (await import('node:crypto')).randomBytes(16 * 1024 * 1024);
    const fixture = archiveOf(
      [
        { name: 'link', type: '2', linkname: '/etc/passwd' },
        { name: 'index.html', data: 'x' },
        { name: 'noise.bin', data: noise },
      ],
      {},
      { level: 1 },
    );
    let status = 0;
    const sent = new Promise<void>((resolve, reject) => {
      const req = server.rawRequest(
        'POST',
        '/api/v1/applications',
        { token, idempotencyKey: randomKey(), body: fixture.body, headers: uploadHeadersOf(fixture.declaration) },
        (res) => {
          status = res.statusCode!;
          res.resume();
        },
      );
      req.on('error', reject);
      // 'finish': every byte of the body went out, which needs the server to keep reading it.
      req.on('finish', () => resolve());
    });
    await sent;
    await waitFor(async () => (status ? true : undefined), 'the answer');
    expect(status).toBe(202);
    await server.services.operations.idle();
    const ops = await server.services.store.db
      .selectFrom('operations')
      .select(['state', 'error'])
      .where('request_id', 'is not', null)
      .orderBy('created_at', 'desc')
      .execute();
    expect(ops.some((o) => o.state === 'failed' && JSON.parse(o.error!).errors[0].code === 'unsupported_entry')).toBe(
      true,
    );
  });
});

describe('releases of an application', () => {
  async function readyApplication(token: string): Promise<{ id: string; releaseId: string }> {
    const res = await upload(archiveOf(sampleApp('v1')), { token, headers: { 'Marquee-Application-Name': 'Menu' } });
    await settled(token, res.json().operation_id);
    return { id: res.json().id, releaseId: res.json().release_id };
  }

  it('bumps the revision on acceptance and again when the new release becomes the latest', async () => {
    const { token, projectId } = await server.enroll();
    const app = await readyApplication(token);
    gate.hold = true;
    try {
      const res = await upload(archiveOf(sampleApp('v2')), { token, applicationId: app.id, ifMatch: 2 });
      expect(res.status).toBe(202);
      expect(res.json().id).toBe(app.id);
      await waitFor(async () => (gate.waiting.has(res.json().operation_id) ? true : undefined), 'the held publication');
      const accepted = (await server.request('GET', `/api/v1/applications/${app.id}`, { token })).json();
      expect(accepted).toMatchObject({ revision: 3, latest_ready_release: app.releaseId, state: 'ready' });
      gate.release(res.json().operation_id);
      expect((await settled(token, res.json().operation_id)).state).toBe('succeeded');
      const published = await server.request('GET', `/api/v1/applications/${app.id}`, { token });
      expect(published.json()).toMatchObject({ revision: 4, latest_ready_release: res.json().release_id });
      expect(published.headers.etag).toBe('"4"');
    } finally {
      gate.hold = false;
    }
    // Releases are immutable: the first is still ready beside the second.
    const states = await server.services.store.db
      .selectFrom('releases')
      .select(['id', 'state'])
      .where('application_id', '=', app.id)
      .execute();
    expect(states.map((r) => r.state)).toEqual(['ready', 'ready']);
    expect(await eventTypes(projectId)).toContain('application.release_accepted');
  });

  it('keeps the newer release as latest when an older upload publishes after it', async () => {
    const { token } = await server.enroll();
    const app = await readyApplication(token);
    gate.hold = true;
    let older: TestResponse;
    try {
      older = await upload(archiveOf(sampleApp('older')), { token, applicationId: app.id });
      await waitFor(
        async () => (gate.waiting.has(older.json().operation_id) ? true : undefined),
        'the older publication',
      );
      gate.hold = false;
      const newer = await upload(archiveOf(sampleApp('newer')), { token, applicationId: app.id });
      expect(
        (
          await waitFor(async () => {
            const op = await operation(token, newer.json().operation_id);
            return op.state === 'succeeded' ? op : undefined;
          }, 'the newer release')
        ).state,
      ).toBe('succeeded');
      gate.release(older.json().operation_id);
      await settled(token, older.json().operation_id);
      const got = (await server.request('GET', `/api/v1/applications/${app.id}`, { token })).json();
      // Accepted: 3 (older), 4 (newer); published newer: 5; the older one changes nothing.
      expect(got).toMatchObject({ latest_ready_release: newer.json().release_id, revision: 5 });
    } finally {
      gate.hold = false;
    }
  });

  // Deterministic where transactions run side by side: the older publication reads the application
  // before the newer one commits, and writes after (on SQLite it would wait for the newer's transaction).
  it.skipIf(!onPostgres)('keeps the newer release as latest when both publish at the same moment', async () => {
    const { token, projectId } = await server.enroll();
    const app = await readyApplication(token);
    gate.hold = true;
    const held: string[] = [];
    try {
      for (const name of ['older', 'newer']) {
        const res = await upload(archiveOf(sampleApp(name)), { token, applicationId: app.id });
        held.push(res.json().operation_id);
        await waitFor(async () => (gate.waiting.has(res.json().operation_id) ? true : undefined), `the ${name} upload`);
      }
      const [older, newer] = await Promise.all(
        held.map((id) => server.services.operations.get(server.services.store.db, projectId, id)),
      );
      const { services } = server;
      let commitNewer!: () => void;
      const newerHeld = new Promise<void>((resolve) => (commitNewer = resolve));
      let newerPublished!: () => void;
      const newerWritten = new Promise<void>((resolve) => (newerPublished = resolve));
      const first = services.store.transaction(async (work) => {
        await publishRelease(work, services, newer!, uploadInput(newer!));
        newerPublished();
        await newerHeld;
      });
      await newerWritten;
      const second = services.store.transaction((work) => publishRelease(work, services, older!, uploadInput(older!)));
      await new Promise((r) => setTimeout(r, 300)); // the older one waits for the newer's row
      commitNewer();
      await Promise.all([first, second]);
      const got = (await server.request('GET', `/api/v1/applications/${app.id}`, { token })).json();
      expect(got.latest_ready_release).toBe(uploadInput(newer!).release_id);
    } finally {
      gate.hold = false;
      // The held runs find their releases published already and fail; nothing else is left held.
      for (const id of held) gate.release(id);
      await server.services.operations.idle();
    }
  });

  it('answers a stale If-Match with 412 and current_revision, before reading the body', async () => {
    const { token, projectId } = await server.enroll();
    const app = await readyApplication(token);
    const res = await upload(archiveOf(sampleApp()), { token, applicationId: app.id, ifMatch: 1 });
    expect(res.status).toBe(412);
    expect(res.json()).toMatchObject({ code: 'revision_conflict', current_revision: 2 });
    expect(await operationsOf(projectId)).toHaveLength(1);
  });

  it('refuses a name header that would rename the application, and takes the same name', async () => {
    const { token } = await server.enroll();
    const app = await readyApplication(token);
    const rename = await upload(archiveOf(sampleApp()), {
      token,
      applicationId: app.id,
      headers: { 'Marquee-Application-Name': 'Drinks' },
    });
    expect(rename.status).toBe(400);
    expect(rename.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'Marquee-Application-Name', code: 'rename_refused' }],
    });
    const renameExt = await upload(archiveOf(sampleApp()), {
      token,
      applicationId: app.id,
      headers: { 'Marquee-Application-Name*': "UTF-8''Men%C3%BC" },
    });
    expect(renameExt.json().errors[0].field).toBe('Marquee-Application-Name*');
    const same = await upload(archiveOf(sampleApp()), {
      token,
      applicationId: app.id,
      headers: { 'Marquee-Application-Name': 'Menu' },
    });
    expect(same.status).toBe(202);
  });

  it("answers not_found for an unknown or another tenant's application", async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    const app = await readyApplication(a.token);
    expect((await upload(archiveOf(sampleApp()), { token: b.token, applicationId: app.id })).status).toBe(404);
    expect((await upload(archiveOf(sampleApp()), { token: a.token, applicationId: 'app_unknown' })).status).toBe(404);
    expect((await server.request('GET', `/api/v1/applications/${app.id}`, { token: b.token })).status).toBe(404);
    expect((await server.request('GET', '/api/v1/applications', { token: b.token })).json().items).toEqual([]);
    expect((await server.request('DELETE', `/api/v1/applications/${app.id}`, { token: b.token })).status).toBe(404);
    expect((await server.request('GET', '/api/v1/applications')).status).toBe(401);
  });
});

describe('deleting an application', () => {
  it('tombstones the application and its releases, removes their files and gives the bytes back', async () => {
    const { token, projectId } = await server.enroll();
    const res = await upload(archiveOf(sampleApp()), { token });
    await settled(token, res.json().operation_id);
    const stale = await server.request('DELETE', `/api/v1/applications/${res.json().id}`, { token, ifMatch: 1 });
    expect(stale.status).toBe(412);
    expect(stale.json()).toMatchObject({ code: 'revision_conflict', current_revision: 2 });

    const key = randomKey();
    const deleted = await server.request('DELETE', `/api/v1/applications/${res.json().id}`, {
      token,
      ifMatch: 2,
      idempotencyKey: key,
    });
    expect(deleted.status).toBe(204);
    expect(
      (
        await server.request('DELETE', `/api/v1/applications/${res.json().id}`, {
          token,
          ifMatch: 2,
          idempotencyKey: key,
        })
      ).status,
    ).toBe(204);
    expect((await server.request('GET', `/api/v1/applications/${res.json().id}`, { token })).status).toBe(404);
    expect((await server.request('GET', '/api/v1/applications', { token })).json().items).toEqual([]);
    expect((await server.request('DELETE', `/api/v1/applications/${res.json().id}`, { token })).status).toBe(404);
    const release = await server.services.store.db
      .selectFrom('releases')
      .selectAll()
      .where('id', '=', res.json().release_id)
      .executeTakeFirstOrThrow();
    expect(release.state).toBe('deleted');
    expect(release.deleted_at).not.toBeNull();
    await waitFor(
      async () => (blobFiles(server, `releases/${res.json().release_id}`).length === 0 ? true : undefined),
      'the files to go',
    );
    expect(await project(token)).toMatchObject({ used_bytes: 0, reserved_bytes: 0 });
    expect(await eventTypes(projectId)).toContain('application.deleted');
  });

  it('leaves no package of a deleted release: not queued, not in flight, not already built', async () => {
    const { token } = await server.enroll();
    const { blobs, store } = server.services;
    const packageRow = (releaseId: string) =>
      store.db.selectFrom('release_packages').select('bytes').where('release_id', '=', releaseId).executeTakeFirst();
    const publish = async (marker: string) => {
      const res = await upload(archiveOf(sampleApp(marker)), { token });
      expect(res.status, res.text).toBe(202);
      await settled(token, res.json().operation_id);
      return res.json() as { id: string; release_id: string };
    };
    // Already built: the delete removes its row with the files.
    const built = await publish('built');
    await server.services.packageBuilds.idle();
    expect(await packageRow(built.release_id)).toBeDefined();
    expect((await server.request('DELETE', `/api/v1/applications/${built.id}`, { token })).status).toBe(204);
    expect(await packageRow(built.release_id)).toBeUndefined();

    // Hold the next package build at its blob write (a large one takes minutes), so another queues.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const write = blobs.write.bind(blobs);
    let held: string | undefined;
    blobs.write = async (key, source, options) => {
      if (key.endsWith('/package') && held === undefined) {
        held = key;
        await gate;
      }
      return write(key, source, options);
    };
    try {
      const inFlight = await publish('in-flight');
      const queued = await publish('queued');
      await waitFor(async () => held, 'the first build to reach its write');
      expect(held).toBe(packageKey(inFlight.release_id));
      for (const app of [queued, inFlight])
        expect((await server.request('DELETE', `/api/v1/applications/${app.id}`, { token })).status).toBe(204);
      // The delete's file removal has run before the held build writes its package.
      await waitFor(
        async () => (blobFiles(server, `releases/${inFlight.release_id}`).length === 0 ? true : undefined),
        'the files to go',
      );
      open();
      await server.services.packageBuilds.idle();
      for (const app of [inFlight, queued]) {
        expect(await blobs.stat(packageKey(app.release_id))).toBeUndefined();
        expect(blobFiles(server, `releases/${app.release_id}`)).toEqual([]);
        expect(await packageRow(app.release_id)).toBeUndefined();
      }
    } finally {
      blobs.write = write;
      open();
    }
  });

  it('is refused with application_in_use while a live manifest references it', async () => {
    const { token } = await server.enroll();
    const res = await upload(archiveOf(sampleApp()), { token });
    await settled(token, res.json().operation_id);
    inUse.add(res.json().id);
    try {
      const refused = await server.request('DELETE', `/api/v1/applications/${res.json().id}`, { token });
      expect(refused.status).toBe(409);
      expect(refused.json().code).toBe('application_in_use');
      expect((await server.request('GET', `/api/v1/applications/${res.json().id}`, { token })).status).toBe(200);
    } finally {
      inUse.delete(res.json().id);
    }
    expect((await server.request('DELETE', `/api/v1/applications/${res.json().id}`, { token })).status).toBe(204);
  });

  it('cancels an upload of the application still in flight: nothing is published', async () => {
    const { token } = await server.enroll();
    const first = await upload(archiveOf(sampleApp()), { token });
    await settled(token, first.json().operation_id);
    gate.hold = true;
    try {
      const second = await upload(archiveOf(sampleApp('2')), { token, applicationId: first.json().id });
      await waitFor(
        async () => (gate.waiting.has(second.json().operation_id) ? true : undefined),
        'the held publication',
      );
      expect((await server.request('DELETE', `/api/v1/applications/${first.json().id}`, { token })).status).toBe(204);
      gate.release(second.json().operation_id);
      const op = await settled(token, second.json().operation_id);
      expect(op.state).toBe('cancelled');
      await waitFor(
        async () => (blobFiles(server, `releases/${second.json().release_id}`).length === 0 ? true : undefined),
        'the files to go',
      );
    } finally {
      gate.hold = false;
    }
    expect(await project(token)).toMatchObject({ used_bytes: 0, reserved_bytes: 0 });
  });
});

describe('concurrent uploads', () => {
  it('accepts and publishes several uploads of one project at once', async () => {
    const { token } = await server.enroll();
    const fixtures = Array.from({ length: 6 }, (_, i) => archiveOf(sampleApp(`app-${i}`)));
    const answers = await Promise.all(fixtures.map((f) => upload(f, { token })));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 202]);
    await server.services.operations.idle();
    for (const a of answers) expect((await operation(token, a.json().operation_id)).state).toBe('succeeded');
    expect(new Set(answers.map((a) => a.json().id)).size).toBe(6);
    const total = fixtures.reduce((s, f) => s + f.declaration.expandedBytes, 0);
    expect(await project(token)).toMatchObject({ used_bytes: total, reserved_bytes: 0 });
  });

  it('never lets concurrent reservations overshoot the quota', async () => {
    const { token, projectId } = await server.enroll();
    const fixtures = Array.from({ length: 4 }, (_, i) => archiveOf(sampleApp(`q${i}`)));
    await server.services.store.db
      .updateTable('tenants')
      .set({ content_limit_bytes: fixtures[0]!.declaration.expandedBytes * 2 + 1 })
      .where('id', '=', projectId)
      .execute();
    const answers = await Promise.all(fixtures.map((f) => upload(f, { token })));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 202, 413, 413]);
  });
});

describe('cancel races', () => {
  it('cancel while the body streams: the upload answers 409 and nothing is kept', async () => {
    const { token, projectId } = await server.enroll();
    const fixture = archiveOf(sampleApp());
    const { body, answer } = slowUpload(fixture, token);
    const op = await waitFor(async () => (await operationsOf(projectId))[0], 'the receiving operation');
    const cancelled = await server.request('POST', `/api/v1/operations/${op.id}/cancel`, {
      token,
      idempotencyKey: randomKey(),
    });
    expect(cancelled.json().state).toBe('cancelled');
    body.end(fixture.body.subarray(16));
    const res = await answer;
    expect(res.status).toBe(409);
    expect(res.json()).toMatchObject({
      code: 'resource_conflict',
      detail: expect.stringContaining('cancelled while the archive was being received'),
    });
    expect((await server.request('GET', '/api/v1/applications', { token })).json().items).toEqual([]);
    expect((await operation(token, op.id)).state).toBe('cancelled');
    expect(await project(token)).toMatchObject({ reserved_bytes: 0, used_bytes: 0 });
    expect(blobFiles(server, `.staging/${op.id}`)).toEqual([]);
  });

  it('cancel while the worker publishes: the worker loses its fence and publishes nothing', async () => {
    const { token } = await server.enroll();
    gate.hold = true;
    let res: TestResponse;
    try {
      res = await upload(archiveOf(sampleApp()), { token });
      const opId = res.json().operation_id;
      await waitFor(async () => (gate.waiting.has(opId) ? true : undefined), 'the held publication');
      expect((await operation(token, opId)).state).toBe('running');
      const cancelled = await server.request('POST', `/api/v1/operations/${opId}/cancel`, {
        token,
        idempotencyKey: randomKey(),
      });
      expect(cancelled.json().state).toBe('cancelled');
    } finally {
      gate.hold = false;
    }
    const op = await settled(token, res.json().operation_id);
    expect(op.state).toBe('cancelled');
    expect(op.result).toBeUndefined();
    const app = (await server.request('GET', `/api/v1/applications/${res.json().id}`, { token })).json();
    expect(app).toMatchObject({ state: 'failed', revision: 1 });
    await waitFor(
      async () =>
        blobFiles(server, `releases/${res.json().release_id}`).length === 0 &&
        blobFiles(server, `.staging/${res.json().operation_id}`).length === 0
          ? true
          : undefined,
      'the files to go',
    );
    expect(await project(token)).toMatchObject({ reserved_bytes: 0, used_bytes: 0 });
  });

  it('cancel after publication is a conflict and changes nothing', async () => {
    const { token } = await server.enroll();
    const res = await upload(archiveOf(sampleApp()), { token });
    await settled(token, res.json().operation_id);
    const late = await server.request('POST', `/api/v1/operations/${res.json().operation_id}/cancel`, {
      token,
      idempotencyKey: randomKey(),
    });
    expect(late.status).toBe(409);
    expect((await server.request('GET', `/api/v1/applications/${res.json().id}`, { token })).json().state).toBe(
      'ready',
    );
  });
});

describe('restarts', () => {
  it('fails an upload whose body was streaming when the server stopped, and frees what it held', async () => {
    const s = await TestServer.start({ beforeListen: install });
    try {
      const { token, projectId } = await s.enroll();
      const fixture = archiveOf(sampleApp());
      const { answer } = slowUpload(fixture, token, s);
      answer.catch(() => undefined);
      const op = await waitFor(async () => (await operationsOf(projectId, s))[0], 'the receiving operation');
      const next = await s.restart();
      try {
        const row = await next.services.store.db
          .selectFrom('operations')
          .selectAll()
          .where('id', '=', op.id)
          .executeTakeFirstOrThrow();
        expect(row.state).toBe('failed');
        expect(JSON.parse(row.error!).code).toMatch(/internal_error|invalid_request/);
        await expectNothingHeld(next, projectId, op.id);
      } finally {
        await next.stop();
      }
    } catch (error) {
      await s.stop().catch(() => undefined);
      throw error;
    }
  });

  /** A failed upload holds nothing: no bytes reserved or used, no staged files. */
  async function expectNothingHeld(server: TestServer, projectId: string, opId: string) {
    const tenant = await server.services.store.db
      .selectFrom('tenants')
      .select(['reserved_bytes', 'used_bytes'])
      .where('id', '=', projectId)
      .executeTakeFirstOrThrow();
    expect(tenant).toEqual({ reserved_bytes: 0, used_bytes: 0 });
    await waitFor(
      async () => (blobFiles(server, `.staging/${opId}`).length === 0 ? true : undefined),
      'the staged files to go',
    );
  }

  it('fails an upload whose receiving replica stopped renewing it and never came back, and frees what it held', async () => {
    const s = await TestServer.start({ clock: new TestClock('2026-11-21T12:00:00Z'), beforeListen: install });
    try {
      const { token, projectId } = await s.enroll();
      const { body, answer } = slowUpload(archiveOf(sampleApp('orphan')), token, s);
      answer.catch(() => undefined);
      const op = await waitFor(async () => (await operationsOf(projectId, s))[0], 'the receiving operation');
      const row = () =>
        s.services.store.db.selectFrom('operations').selectAll().where('id', '=', op.id).executeTakeFirstOrThrow();
      // While its receiver lives, the lease is renewed: the watchdog leaves the upload alone.
      for (let i = 0; i < 3; i++) {
        s.clock.advance(LEASE_MS / 2 + 1);
        await s.services.operations.renewLeases();
        await s.services.operations.expireLeases();
      }
      expect((await row()).state).toBe('receiving');
      // The replica receiving it dies for good: no restart with its worker id will fail it.
      await s.services.store.db
        .updateTable('operations')
        .set({ lease_owner: 'wkr_gone' })
        .where('id', '=', op.id)
        .execute();
      s.clock.advance(LEASE_MS + 1);
      await s.services.operations.renewLeases();
      await s.services.operations.expireLeases();
      const failed = await row();
      expect(failed.state).toBe('failed');
      expect(JSON.parse(failed.error!).detail).toBe('the server receiving the upload stopped; upload again');
      await expectNothingHeld(s, projectId, op.id);
      body.destroy();
    } finally {
      await s.stop();
    }
  });

  it('resumes a publication interrupted by a restart', async () => {
    gate.hold = true;
    const s = await TestServer.start({ beforeListen: install });
    let next: TestServer | undefined;
    try {
      const { token } = await s.enroll();
      const res = await upload(archiveOf(sampleApp('resumed')), { token }, s);
      const opId = res.json().operation_id;
      await waitFor(async () => (gate.waiting.has(opId) ? true : undefined), 'the held publication');
      gate.hold = false;
      next = await s.restart();
      await next.services.operations.idle();
      const op = (await next.request('GET', `/api/v1/operations/${opId}`, { token })).json();
      expect(op).toMatchObject({ state: 'succeeded', result: { release_id: res.json().release_id } });
      const app = (await next.request('GET', `/api/v1/applications/${res.json().id}`, { token })).json();
      expect(app).toMatchObject({ state: 'ready', latest_ready_release: res.json().release_id });
      await next.services.packageBuilds.idle();
      expect(blobFiles(next, `releases/${res.json().release_id}`).sort()).toEqual(['0', '1', '2', 'package']);
      expect(blobFiles(next, '.staging')).toEqual([]);
    } finally {
      gate.hold = false;
      await (next ?? s).stop();
    }
  });
});

describe('housekeeping', () => {
  it('sweeps staged trees that belong to no unfinished upload', async () => {
    const { token, projectId } = await server.enroll();
    const done = await upload(archiveOf(sampleApp('done')), { token });
    await settled(token, done.json().operation_id);
    await (await server.services.blobs.stageTree(done.json().operation_id)).finish();
    await (await server.services.blobs.stageTree('op_nobody')).finish();
    const fixture = archiveOf(sampleApp('live'));
    const { body, answer } = slowUpload(fixture, token);
    const live = await waitFor(
      async () => (await operationsOf(projectId)).find((o) => o.state === 'receiving'),
      'the receiving operation',
    );
    await waitFor(
      async () => ((await server.services.blobs.hasStagedTree(live.id)) ? true : undefined),
      'its staging area',
    );
    await sweepStagedTrees(server.services);
    expect(await server.services.blobs.stagedTrees()).toEqual([live.id]);
    body.end(fixture.body.subarray(16));
    expect((await answer).status).toBe(202);
  });
});
