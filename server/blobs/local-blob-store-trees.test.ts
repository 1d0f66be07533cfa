// Tree staging and publication (application releases).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalBlobStore } from './local-blob-store';

let root: string;
let blobs: LocalBlobStore;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-blobs-'));
  blobs = new LocalBlobStore(root);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

async function* chunks(...parts: (string | Buffer)[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

async function text(key: string): Promise<string> {
  const out: Buffer[] = [];
  for await (const c of blobs.read(key)) out.push(c as Buffer);
  return Buffer.concat(out).toString('utf8');
}

describe('tree staging', () => {
  it('stages small and large objects, then publishes them under a prefix at once', async () => {
    const large = Buffer.alloc(600 * 1024, 0x61);
    const staging = await blobs.stageTree('op_1');
    await staging.add('0', chunks('hello ', 'world'), 11);
    await staging.add('1', chunks(large.subarray(0, 100), large.subarray(100)), large.length);
    await staging.add('2', chunks(), 0);
    await staging.finish();
    expect(await blobs.stagedTrees()).toEqual(['op_1']);
    expect(await blobs.hasStagedTree('op_1')).toBe(true);
    await blobs.publishTree('op_1', 'releases/rel_1');
    expect(await blobs.hasStagedTree('op_1')).toBe(false);
    expect(await text('releases/rel_1/0')).toBe('hello world');
    expect(await blobs.stat('releases/rel_1/1')).toEqual({ bytes: large.length });
    expect(await blobs.stat('releases/rel_1/2')).toEqual({ bytes: 0 });
  });

  it('replaces whatever an earlier attempt left under the prefix', async () => {
    const first = await blobs.stageTree('op_a');
    await first.add('0', chunks('old'), 3);
    await first.add('9', chunks('stray'), 5);
    await first.finish();
    await blobs.publishTree('op_a', 'releases/rel_x');
    const second = await blobs.stageTree('op_b');
    await second.add('0', chunks('new'), 3);
    await second.finish();
    await blobs.publishTree('op_b', 'releases/rel_x', { durable: true });
    expect(await text('releases/rel_x/0')).toBe('new');
    expect(await blobs.stat('releases/rel_x/9')).toBeUndefined();
  });

  it('starts a reopened staging area empty, and removes it on abort or discard', async () => {
    const staging = await blobs.stageTree('op_r');
    await staging.add('0', chunks('x'), 1);
    await staging.finish();
    const reopened = await blobs.stageTree('op_r');
    await reopened.finish();
    expect(fs.readdirSync(path.join(root, '.staging', 'op_r'))).toEqual([]);
    await reopened.add('0', chunks('y'), 1);
    await reopened.abort();
    expect(await blobs.hasStagedTree('op_r')).toBe(false);
    await (await blobs.stageTree('op_s')).finish();
    await blobs.discardTree('op_s');
    expect(await blobs.stagedTrees()).toEqual([]);
  });

  it('writes durably with fsync when asked', async () => {
    const staging = await blobs.stageTree('op_d', { durable: true });
    for (let i = 0; i < 40; i++) await staging.add(String(i), chunks(`file ${i}`), `file ${i}`.length);
    await staging.finish();
    await blobs.publishTree('op_d', 'releases/rel_d', { durable: true });
    expect(await text('releases/rel_d/39')).toBe('file 39');
  });

  it('refuses object names outside the key grammar and never writes twice to one name', async () => {
    const staging = await blobs.stageTree('op_n');
    await expect(staging.add('../escape', chunks('x'), 1)).rejects.toThrow(/invalid blob key/);
    await expect(staging.add('a/../../b', chunks('x'), 1)).rejects.toThrow(/invalid blob key/);
    await staging.add('0', chunks('x'), 1);
    await expect(staging.add('0', chunks('y'), 1)).rejects.toThrow(/EEXIST/);
    await expect(blobs.stageTree('a/b')).rejects.toThrow(/invalid staging name/);
    expect(fs.existsSync(path.join(root, 'escape'))).toBe(false);
    expect(fs.existsSync(path.join(path.dirname(root), 'b'))).toBe(false);
  });
});
