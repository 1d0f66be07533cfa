// The control plane as an agent drives it in the e2e specs: enrollment, pairing a code, screens,
// playlists, media uploads and application uploads, through the real HTTP API.
import crypto from 'node:crypto';
import { expect } from '@playwright/test';

export const randomKey = () => crypto.randomBytes(16).toString('base64url');
export const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export class ControlApi {
  constructor(
    readonly baseUrl: string,
    private token = '',
  ) {}

  async request<T = any>(
    method: string,
    path: string,
    options: { json?: unknown; body?: Buffer; headers?: Record<string, string>; idempotent?: boolean } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (options.json !== undefined) headers['Content-Type'] = 'application/json';
    if (options.idempotent ?? method !== 'GET') headers['Idempotency-Key'] = randomKey();
    const res = await fetch(new URL(path, this.baseUrl), {
      method,
      headers,
      body:
        options.json !== undefined
          ? JSON.stringify(options.json)
          : options.body
            ? new Uint8Array(options.body)
            : undefined,
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.status, body, headers: res.headers };
  }

  /** A GET whose answer is bytes (a screenshot, an export), with the bearer. */
  async bytes(path: string, accept: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
    const res = await fetch(new URL(path, this.baseUrl), {
      headers: { Authorization: `Bearer ${this.token}`, Accept: accept },
    });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  /** Enrolls a fresh project and keeps its bearer. */
  async enroll(): Promise<void> {
    const res = await this.request('POST', '/api/v1/enrollments', {
      json: {
        client_id: `cli_${crypto.randomBytes(32).toString('base64url').slice(0, 43)}`,
        email: `owner-${randomKey()}@example.com`,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    this.token = res.body.token;
  }

  async pair(code: string, label: string) {
    const res = await this.request('POST', '/api/v1/screens/pair', { json: { code, label } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { screen: { id: string; public_id: string }; public_url: string };
  }

  async screen(id: string) {
    const res = await this.request('GET', `/api/v1/screens/${id}`);
    expect(res.status).toBe(200);
    return res.body;
  }

  async patchScreen(id: string, patch: Record<string, unknown>) {
    const res = await this.request('PATCH', `/api/v1/screens/${id}`, { json: patch });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  /** A fleet action (POST /api/v1/screens/actions); fails the test unless it is a 200. */
  async screenActions(selector: Record<string, unknown>, action: Record<string, unknown>) {
    const res = await this.request('POST', '/api/v1/screens/actions', { json: { selector, action } });
    if (res.status !== 200) throw new Error(`screen actions: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async createPlaylist(document: Record<string, unknown>): Promise<{ id: string; revision: number }> {
    const res = await this.request('POST', '/api/v1/playlists', { json: document });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  async replacePlaylist(id: string, document: Record<string, unknown>) {
    const res = await this.request('PUT', `/api/v1/playlists/${id}`, { json: document });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  async waitForOperation(id: string, timeoutMs = 30_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await this.request('GET', `/api/v1/operations/${id}`);
      if (res.body?.state === 'succeeded' || res.body?.state === 'failed' || res.body?.state === 'cancelled')
        return res.body;
      if (Date.now() > deadline) throw new Error(`operation ${id} still ${res.body?.state}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  /** Declare → signed PUT → commit → verified; returns the ready media id. */
  async uploadMedia(bytes: Buffer, contentType: string, filename: string): Promise<string> {
    const declared = await this.request('POST', '/api/v1/media/uploads', {
      json: { filename, content_type: contentType, bytes: bytes.length, sha256: sha256(bytes) },
    });
    expect(declared.status, JSON.stringify(declared.body)).toBe(201);
    const session = declared.body;
    const put = await fetch(session.upload_url, {
      method: session.method,
      headers: session.headers,
      body: new Uint8Array(bytes),
    });
    expect(put.status).toBe(200);
    const committed = await this.request('POST', `/api/v1/media/uploads/${session.id}/commit`, {
      json: { content_type: contentType, bytes: bytes.length, sha256: sha256(bytes) },
    });
    expect(committed.status, JSON.stringify(committed.body)).toBe(202);
    const op = await this.waitForOperation(session.operation.id);
    expect(op.state, JSON.stringify(op)).toBe('succeeded');
    return op.result.media_id;
  }

  /** Every event of the tenant so far (pages through the list). */
  async events(): Promise<
    Array<{ type: string; details?: Record<string, unknown>; resource?: { type: string; id: string } }>
  > {
    const items: any[] = [];
    let after = '';
    for (;;) {
      const res = await this.request(
        'GET',
        `/api/v1/events?limit=200${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      );
      expect(res.status).toBe(200);
      items.push(...res.body.items);
      if (res.body.items.length < 200) return items;
      after = res.body.next_cursor;
    }
  }
}
