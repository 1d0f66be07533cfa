// Test media made on the fly (no binary fixtures, no ffmpeg): images through sharp, MP4 and WebM
// containers and MP3 streams through mediabunny with synthetic packets, plus the upload walk.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  BufferTarget,
  EncodedPacket,
  EncodedVideoPacketSource,
  Mp4OutputFormat,
  Output,
  WebMOutputFormat,
} from 'mediabunny';
import sharp from 'sharp';
import { expect } from 'vitest';
import type { MediaUploadSession } from '../../sdk/contract/media';
import { randomKey, type TestResponse, type TestServer } from '../testing/harness';

export function sha256(bytes: Buffer): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

export async function image(format: 'png' | 'jpeg' | 'webp' | 'gif', width = 64, height = 48): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#2a7ab0' } })
    .toFormat(format)
    .toBuffer();
}

/** A container with `seconds` of synthetic 10 fps video packets of `packetBytes` each. */
export async function video(
  container: 'mp4' | 'webm',
  options: { width?: number; height?: number; seconds?: number; packetBytes?: number } = {},
): Promise<Buffer> {
  const { width = 320, height = 240, seconds = 3, packetBytes = 8 } = options;
  const output = new Output({
    format: container === 'mp4' ? new Mp4OutputFormat() : new WebMOutputFormat(),
    target: new BufferTarget(),
  });
  const source = new EncodedVideoPacketSource(container === 'mp4' ? 'avc' : 'vp8');
  output.addVideoTrack(source);
  await output.start();
  // avcC: version 1, Constrained Baseline profile, level 3.1, 4-byte lengths, no parameter sets.
  const avcC = new Uint8Array([1, 0x42, 0x00, 0x1f, 0xff, 0xe0, 0x00]);
  const frames = seconds * 10;
  for (let i = 0; i < frames; i++) {
    const data = new Uint8Array(packetBytes);
    data.set([0, 0, 0, packetBytes - 4, 0x65, 0x88, 0x84, i & 0xff].slice(0, packetBytes));
    const packet = new EncodedPacket(data, i === 0 ? 'key' : 'delta', i / 10, 0.1);
    await source.add(
      packet,
      i === 0
        ? {
            decoderConfig: {
              codec: container === 'mp4' ? 'avc1.42001f' : 'vp8',
              codedWidth: width,
              codedHeight: height,
              ...(container === 'mp4' ? { description: avcC } : {}),
            },
          }
        : undefined,
    );
  }
  await output.finalize();
  return Buffer.from((output.target as BufferTarget).buffer!);
}

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz frames (417 bytes, 1152 samples each). */
export function mp3(frames = 100): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

export function mp3DurationMs(frames: number): number {
  return Math.round(((frames * 1152) / 44100) * 1000);
}

export interface Declared {
  session: MediaUploadSession;
  bytes: Buffer;
  declaration: Record<string, unknown>;
}

export async function declare(
  server: TestServer,
  token: string,
  bytes: Buffer,
  contentType: string,
  extra: Record<string, unknown> = {},
): Promise<Declared> {
  const declaration = {
    filename: `upload${contentType.replace(/.*\//, '.')}`,
    content_type: contentType,
    bytes: bytes.length,
    sha256: sha256(bytes),
    ...extra,
  };
  const res = await server.request('POST', '/api/v1/media/uploads', {
    token,
    json: declaration,
    idempotencyKey: randomKey(),
  });
  expect(res.status, res.text).toBe(201);
  return { session: res.json(), bytes, declaration };
}

/** Sends the PUT exactly as the session says (URL, method, every header). */
export function put(
  server: TestServer,
  session: MediaUploadSession,
  body: Buffer | Readable,
  headers: Record<string, string> = session.headers,
  url = session.upload_url,
): Promise<TestResponse> {
  const target = new URL(url);
  return server.request(session.method, target.pathname + target.search, { host: target.host, headers, body });
}

export function commit(
  server: TestServer,
  token: string,
  declared: Declared,
  body?: Record<string, unknown>,
): Promise<TestResponse> {
  const { content_type, bytes, sha256: hash } = declared.declaration;
  return server.request('POST', `/api/v1/media/uploads/${declared.session.id}/commit`, {
    token,
    json: body ?? { content_type, bytes, sha256: hash },
    idempotencyKey: randomKey(),
  });
}

/** Declare → PUT → commit → wait; returns the finished operation. */
export async function upload(
  server: TestServer,
  token: string,
  bytes: Buffer,
  contentType: string,
  extra: Record<string, unknown> = {},
) {
  const declared = await declare(server, token, bytes, contentType, extra);
  const stored = await put(server, declared.session, bytes);
  expect(stored.status, stored.text).toBe(200);
  const committed = await commit(server, token, declared);
  expect(committed.status, committed.text).toBe(202);
  await server.services.operations.idle();
  const op = (await server.request('GET', `/api/v1/operations/${declared.session.operation.id}`, { token })).json();
  return { declared, op, mediaId: op.result?.media_id as string | undefined };
}

/** Uploads and returns the ready media. */
export async function uploadReady(
  server: TestServer,
  token: string,
  bytes: Buffer,
  contentType: string,
  extra: Record<string, unknown> = {},
) {
  const { op, mediaId } = await upload(server, token, bytes, contentType, extra);
  expect(op.state, JSON.stringify(op)).toBe('succeeded');
  const res = await server.request('GET', `/api/v1/media/${mediaId}`, { token });
  expect(res.status).toBe(200);
  return res.json();
}
