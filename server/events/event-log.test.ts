import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';
import { StatementLog } from '../testing/statement-log';
import type { InProcessNotifier } from '../notifier';
import { inSavepoint } from '../store/store';
import { screenChannel, tenantChannel, type HeldEvent, type NewEvent } from './event-log';
import { sampleEvent } from './event-samples.testing';

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => server.stop());

async function rows(tenantId: string) {
  return server.services.store.db
    .selectFrom('events')
    .select(['position', 'type', 'runtime', 'screen_id', 'details'])
    .where('tenant_id', '=', tenantId)
    .orderBy('position')
    .execute();
}

describe('the event log', () => {
  it('refuses an event whose details break its type’s schema, and with it the whole transaction', async () => {
    const { projectId } = await server.enroll();
    const before = await rows(projectId);
    const wrong = {
      tenantId: projectId,
      type: 'screen.manifest_changed',
      message: 'm',
      screenId: 'scr_x',
      details: { manifest_revision: '2', content_access_generation: 1, reason: 'playlist_assigned', extra: true },
    } as unknown as NewEvent;
    await expect(
      server.services.store.transaction(async (work) => {
        await server.services.events.append(work, sampleEvent(projectId, 'fine'), server.clock.now());
        await server.services.events.append(work, wrong, server.clock.now());
      }),
    ).rejects.toThrow(
      /screen\.manifest_changed does not match its contract: details\.manifest_revision: .*details: Unrecognized key/,
    );
    expect(await rows(projectId)).toEqual(before);
  });

  it('commits a project’s events in position order: once a later event is readable, every earlier one is', async () => {
    const { projectId } = await server.enroll();
    const { store, events } = server.services;
    let appended!: () => void;
    const firstAppended = new Promise<void>((resolve) => (appended = resolve));
    const first = store.transaction(async (work) => {
      await events.append(work, sampleEvent(projectId, 'first'), server.clock.now());
      appended();
      await new Promise((resolve) => setTimeout(resolve, 200)); // commits late
    });
    await firstAppended;
    await store.transaction((work) => events.append(work, sampleEvent(projectId, 'second'), server.clock.now()));
    // A stream reading now must not pass the first event's position before it is visible.
    const visible = (await rows(projectId)).slice(1).map((r) => r.position);
    await first;
    const all = (await rows(projectId)).slice(1).map((r) => r.position);
    expect(all).toHaveLength(2);
    expect(visible).toEqual(all);
  });

  it('appends many events with one INSERT, numbered in the order given, marking runtime rows by their type', async () => {
    const { projectId } = await server.enroll();
    const log = new StatementLog();
    const events = Array.from({ length: 500 }, (_, i) =>
      sampleEvent(projectId, `#${i}`, { screenId: `scr_${i}`, type: i % 2 === 0 ? 'player.reload' : 'screen.updated' }),
    );
    const positions = (await server.services.store.transaction((work) =>
      server.services.events.appendMany({ ...work, db: work.db.withPlugin(log) }, events, server.clock.now()),
    ))!;
    expect(log.statements).toEqual(['Insert events']);
    const written = (await rows(projectId)).slice(1); // after account.enrolled
    expect(written.map((r) => r.position)).toEqual(positions);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(written.map((r) => [r.screen_id, r.type, r.runtime])).toEqual(
      events.map((e, i) => [`scr_${i}`, e.type, i % 2 === 0 ? 1 : 0]),
    );
  });

  it('wakes each event’s tenant and screen streams only once the transaction committed', async () => {
    const { projectId } = await server.enroll();
    const notifier = server.services.notifier as InProcessNotifier;
    const heard: string[] = [];
    const offs = [tenantChannel(projectId), screenChannel('scr_w1'), screenChannel('scr_w2')].map((channel) =>
      notifier.subscribe(channel, () => heard.push(channel)),
    );
    try {
      await server.services.store.transaction(async (work) => {
        await server.services.events.appendMany(
          work,
          [
            sampleEvent(projectId, 'a', { screenId: 'scr_w1', type: 'player.reload' }),
            sampleEvent(projectId, 'b', { screenId: 'scr_w2', type: 'player.reload' }),
          ],
          server.clock.now(),
        );
        expect(heard).toEqual([]);
      });
      expect(heard.sort()).toEqual(
        [tenantChannel(projectId), tenantChannel(projectId), screenChannel('scr_w1'), screenChannel('scr_w2')].sort(),
      );
    } finally {
      for (const off of offs) off();
    }
  });

  it('holds a unit’s events until the group writes them in one INSERT; a unit rolled back in its savepoint passes none on', async () => {
    const { projectId } = await server.enroll();
    const { events, store } = server.services;
    const log = new StatementLog();
    const before = await rows(projectId);
    await store.transaction(async (outer) => {
      const work = { ...outer, db: outer.db.withPlugin(log) };
      const group: HeldEvent[] = [];
      await inSavepoint(work, async (savepoint) => {
        const unit = events.hold(savepoint);
        const held = unit.heldEvents;
        expect(await events.append(unit, sampleEvent(projectId, 'kept 1'), server.clock.now())).toBeUndefined();
        await events.append(unit, sampleEvent(projectId, 'kept 2'), server.clock.now());
        group.push(...held);
      });
      await expect(
        inSavepoint(work, async (savepoint) => {
          const unit = events.hold(savepoint);
          const held = unit.heldEvents;
          await events.append(unit, sampleEvent(projectId, 'dropped'), server.clock.now());
          await unit.db
            .insertInto('fleet_actions')
            .values({
              tenant_id: projectId,
              idempotency_key: 'k',
              fingerprint: 'f',
              screen_ids: '[]',
              action: '{}',
              created_at: 0,
            })
            .execute();
          if (held.length > 0) throw new Error('this unit fails');
          group.push(...held); // as a fleet screen does: only once its work is done
        }),
      ).rejects.toThrow('this unit fails');
      // A bad event fails its unit when appended, not the group when written.
      const wrong = { ...sampleEvent(projectId, 'bad'), details: { nonsense: 1 } } as unknown as NewEvent;
      await expect(
        inSavepoint(work, async (savepoint) => {
          await events.append(events.hold(savepoint), wrong, server.clock.now());
        }),
      ).rejects.toThrow(/does not match its contract/);
      expect(log.statements.filter((s) => s.startsWith('Insert events'))).toEqual([]);
      await events.writeHeld(work, group);
      expect(log.statements.filter((s) => s.startsWith('Insert events'))).toEqual(['Insert events']);
    });
    const written = await store.db
      .selectFrom('events')
      .select('message')
      .where('tenant_id', '=', projectId)
      .where('position', '>', before.at(-1)!.position)
      .orderBy('position')
      .execute();
    expect(written.map((r) => r.message)).toEqual(['kept 1', 'kept 2']);
    const rolledBack = await store.db
      .selectFrom('fleet_actions')
      .selectAll()
      .where('tenant_id', '=', projectId)
      .execute();
    expect(rolledBack).toEqual([]);
  });
});
