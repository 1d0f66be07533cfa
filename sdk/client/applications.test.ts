// The client's application routes and archive upload helper against a real Marquee server.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../../server/testing/harness';
import { packApplication, type PackedApplication } from '../pack/pack';
import { recordingFetch, testClient } from '../testing/client-fixture';
import { type MarqueeProblem, OperationFailedError, type UploadProgress } from './marquee-client';
import { publishApplicationDirectory } from './node-files';

const KV_COUNTER = path.resolve(import.meta.dirname, '../examples/kv-counter');
/** The bridge's bytes do not matter to the server; any script stands in for the built one. */
const RUNTIME = Buffer.from('/* stand-in for dist/sdk/marquee-app.js */\n');

let server: TestServer;
let baseUrl: string;
let packed: PackedApplication;

beforeAll(async () => {
  server = await TestServer.start();
  baseUrl = `http://127.0.0.1:${server.port}`;
  packed = await packApplication(KV_COUNTER, { runtime: RUNTIME, name: 'KV counter' });
});
afterAll(async () => server?.stop());

async function project(options: Parameters<typeof testClient>[1] = {}) {
  const { token } = await server.enroll();
  return testClient(baseUrl, { token, ...options });
}

describe('applications.publish', () => {
  it('uploads a packed archive with all its Marquee headers, reports bytes sent, waits, and answers the ready application', async () => {
    const { calls, fetchImpl } = recordingFetch();
    const c = await project({ fetch: fetchImpl });
    const progress: UploadProgress[] = [];
    const published = await c.applications.publish(packed, { onProgress: (p) => progress.push(p) });

    expect(published.data).toMatchObject({
      name: 'KV counter',
      state: 'ready',
      latest_ready_release: published.releaseId,
    });
    expect(published.operation).toMatchObject({
      kind: 'application.upload',
      state: 'succeeded',
      result: { application_id: published.data.id, release_id: published.releaseId },
    });
    expect(published.revision).toBe(published.data.revision);
    expect(published.credits?.remaining).toBeTypeOf('number');

    const post = calls.find((call) => call.method === 'POST')!;
    for (const [name, value] of Object.entries(packed.headers)) expect(post.headers[name.toLowerCase()]).toBe(value);
    expect(post.headers['idempotency-key']).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(post.headers['content-length']).toBe(String(packed.archive.length));

    // Node streams the body, so progress moves in chunks up to the archive's size, then processing.
    const uploads = progress.filter((p) => p.stage === 'upload');
    expect(uploads[0]).toEqual({ stage: 'upload', sent: 0, total: packed.archive.length });
    expect(uploads.at(-1)!.sent).toBe(packed.archive.length);
    expect(uploads.map((p) => p.sent)).toEqual([...uploads.map((p) => p.sent)].sort((a, b) => a - b));
    expect(progress.at(-1)).toMatchObject({ stage: 'processing', operation: { state: 'succeeded' } });
  });

  it('computes the headers of raw archive bytes from their facts', async () => {
    const c = await project();
    const published = await c.applications.publish({
      archive: new Blob([new Uint8Array(packed.archive)]),
      expandedBytes: packed.expandedBytes,
      fileCount: packed.fileCount,
      name: 'Café board',
    });
    expect(published.data).toMatchObject({ name: 'Café board', state: 'ready' });
  });

  it('turns an archive that breaks a rule into OperationFailedError with the rule', async () => {
    const c = await project();
    const error = (await c.applications
      .publish({ archive: packed.archive, expandedBytes: packed.expandedBytes, fileCount: packed.fileCount + 1 })
      .catch((e: unknown) => e)) as OperationFailedError;
    expect(error).toBeInstanceOf(OperationFailedError);
    expect(error.problem.code).toBe('invalid_request');
    expect(error.problem.errors[0]?.code).toBe('file_count_mismatch');
  });

  it('refuses a packed archive without its required headers before sending anything', async () => {
    const { calls, fetchImpl } = recordingFetch();
    const c = await project({ fetch: fetchImpl });
    await expect(
      c.applications.upload({ archive: packed.archive, headers: { 'Content-Type': 'application/gzip' } }),
    ).rejects.toThrow(/Marquee-Archive-SHA256/);
    expect(calls).toHaveLength(0);
  });

  it('retries a lost answer with the same key: one application, not two', async () => {
    const { calls, fetchImpl } = recordingFetch([{ when: (call) => call.method === 'POST', steps: ['network-after'] }]);
    const c = await project({ fetch: fetchImpl });
    const published = await c.applications.publish(packed);
    const posts = calls.filter((call) => call.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    expect((await c.applications.list()).data.items.map((a) => a.id)).toEqual([published.data.id]);
  });
});

describe('releases', () => {
  it('uploads a new release guarded by If-Match from the application, without name headers', async () => {
    const { calls, fetchImpl } = recordingFetch();
    const c = await project({ fetch: fetchImpl });
    const first = await c.applications.publish(packed);
    const second = await packApplication(KV_COUNTER, { runtime: Buffer.from('/* bridge v2 */'), name: 'Another name' });
    const release = await c.applications.publish(second, { applicationId: first.data.id, ifMatch: first });
    expect(release.data.id).toBe(first.data.id);
    expect(release.data.name).toBe('KV counter');
    expect(release.data.latest_ready_release).toBe(release.releaseId);
    expect(release.releaseId).not.toBe(first.releaseId);
    const post = calls.filter((call) => call.method === 'POST').at(-1)!;
    expect(post.url).toBe(`${baseUrl}/api/v1/applications/${first.data.id}/releases`);
    expect(post.headers['if-match']).toBe(`"${first.revision}"`);
    expect(post.headers['marquee-application-name']).toBeUndefined();

    const stale = (await c.applications
      .upload(second, { applicationId: first.data.id, ifMatch: first.revision! })
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect([stale.code, stale.status, stale.current_revision]).toEqual(['revision_conflict', 412, release.revision]);
  });

  it('refuses ifMatch without an application id', async () => {
    const c = await project();
    await expect(c.applications.upload(packed, { ifMatch: 1 })).rejects.toThrow(TypeError);
  });
});

describe('list, get, delete', () => {
  it('lists and reads, deletes with If-Match, and answers not_found afterwards and to another project', async () => {
    const c = await project();
    const other = await project();
    const { data: app, revision } = await c.applications.publish(packed);
    expect((await c.applications.list()).data.items.map((a) => a.id)).toEqual([app.id]);
    const read = await c.applications.get(app.id);
    expect(read.revision).toBe(revision);

    const foreign = (await other.applications.get(app.id).catch((e: unknown) => e)) as MarqueeProblem;
    expect([foreign.code, foreign.status]).toEqual(['not_found', 404]);

    const stale = (await c.applications
      .delete(app.id, { ifMatch: revision! + 1 })
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect(stale.code).toBe('revision_conflict');
    const deleted = await c.applications.delete(app.id, { ifMatch: read.data });
    expect(deleted.status).toBe(204);
    expect(((await c.applications.get(app.id).catch((e: unknown) => e)) as MarqueeProblem).code).toBe('not_found');
  });

  it('uploads with an account bearer (Model A) too', async () => {
    const { token } = await server.createAccount();
    const c = testClient(baseUrl, { token });
    const published = await c.applications.publish(packed);
    expect(published.data.state).toBe('ready');
    expect(published.credits).toBeUndefined();
  });
});

describe('node-files: publishApplicationDirectory', () => {
  it('packs a directory and publishes it in one call', async () => {
    const c = await project();
    const published = await publishApplicationDirectory(c, KV_COUNTER, {
      pack: { runtime: RUNTIME, name: 'From a directory' },
    });
    expect(published.data).toMatchObject({ name: 'From a directory', state: 'ready' });
    expect(published.packed.headers['Marquee-Archive-SHA256']).toBe(packed.headers['Marquee-Archive-SHA256']);
  });
});
