import { afterAll, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';
import type { EventType } from '../../sdk/contract/event-types';
import { sampleEvent } from './event-samples.testing';
import { StreamReader } from './stream-reader.testing';

let server: TestServer;
afterAll(async () => server.stop());

async function append(tenantId: string, count: number, type: EventType): Promise<void> {
  await server.services.store.transaction(async (work) => {
    for (let i = 0; i < count; i++)
      await server.services.events.append(work, sampleEvent(tenantId, `${type} ${i}`, { type }), server.clock.now());
  });
}

describe('event streams across a server restart', () => {
  it('end on drain, and resume on the restarted server from the last cursor with no gap and no duplicate', async () => {
    server = await TestServer.start();
    const { token, projectId } = await server.enroll();
    await append(projectId, 3, 'playlist.created');
    const before = await StreamReader.open(server, '/api/v1/events/stream', { token });
    const seen = (await before.waitForFrames(4)).map((f) => f.json());

    const restarting = server.restart();
    await before.waitForEnd(); // the drain ended the stream instead of waiting for it
    server = await restarting;

    await append(projectId, 2, 'playlist.updated');
    const after = await StreamReader.open(server, `/api/v1/events/stream?after=${seen.at(-1).cursor}`, { token });
    await after.waitForFrames(2);
    await append(projectId, 1, 'playlist.deleted');
    const resumed = (await after.waitForFrames(3)).map((f) => f.json());
    after.close();

    const all = [...seen, ...resumed];
    expect(all.map((e) => e.type)).toEqual([
      'account.enrolled',
      'playlist.created',
      'playlist.created',
      'playlist.created',
      'playlist.updated',
      'playlist.updated',
      'playlist.deleted',
    ]);
    const listed = (await server.request('GET', '/api/v1/events', { token })).json().items;
    expect(all.map((e) => e.sequence)).toEqual(listed.map((e: any) => e.sequence));
    // Cursors minted before the restart still verify: they are signed with the server secret, not per process.
    expect(all.map((e) => e.cursor)).toEqual(listed.map((e: any) => e.cursor));
  });
});
