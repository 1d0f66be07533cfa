// Fleet actions over 500 screens, in this process on one SQLite store: an assign and a takeover by
// fleet action (each screen in its own transaction, through its single-screen code path) against a
// raw better-sqlite3 loop of the same writes (one transaction a screen: the screen row, its
// reference, its events) on other screens of the same database in the same run; then the 500
// players' manifest fetches after the takeover (each mints its screen's new revision).
// Goal (issue 16): p50 ≤ 300 ms and at least 0.5x the raw loop's speed.
import SQLite from 'better-sqlite3';
import { runFleetAction } from '../server/fleet/fleet-actions';
import { insertScreensShowing } from '../server/manifests/manifests.fixtures';
import { currentManifest } from '../server/manifests/minting';
import { imageDoc, insertMedia } from '../server/playlists/content.fixtures';
import { TestServer } from '../server/testing/harness';
import { median, ratio, table } from './harness';

const FLEET = 500;
const ROUNDS = 7;
/** Rounds run first and not counted: the figures are a long-running server's, with its code optimized. */
const WARMUP = 2;

async function timed(fn: () => Promise<unknown> | unknown): Promise<number> {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function fleetActions(): Promise<void> {
  const server = await TestServer.start({ config: { logLevel: 'silent' } });
  try {
    const { services } = server;
    const { token, projectId } = await server.enroll();
    const playlist = async () => {
      const media = await insertMedia(server, projectId);
      const res = await server.request('POST', '/api/v1/playlists', { token, json: imageDoc(media) });
      if (res.status !== 201) throw new Error(`playlist: ${res.status} ${res.text}`);
      return res.json().id as string;
    };
    const [a, b, alert] = [await playlist(), await playlist(), await playlist()];
    const screens = await insertScreensShowing(services, projectId, a, FLEET);
    const rawScreens = await insertScreensShowing(services, projectId, a, FLEET);

    const fleet = (action: Parameters<typeof runFleetAction>[1]['request']['action']) =>
      runFleetAction(services, {
        tenantId: projectId,
        request: { selector: { ids: screens }, action },
        now: server.clock.now(),
        requestId: 'req_bench',
        generation: 'P',
        clientIp: '127.0.0.1',
      });

    // The raw loop: the rows one assignment writes, per screen in its own transaction.
    const raw = new SQLite(services.config.databaseUrl.replace(/^sqlite:/, ''));
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    const update = raw.prepare(
      'UPDATE screens SET playlist_id = ?, effective_playlist_id = ?, revision = revision + 1, manifest_revision = manifest_revision + 1, updated_at = ? WHERE id = ? AND tenant_id = ?',
    );
    const unref = raw.prepare("DELETE FROM screen_playlist_references WHERE screen_id = ? AND role = 'assignment'");
    const ref = raw.prepare(
      "INSERT INTO screen_playlist_references (screen_id, tenant_id, playlist_id, role, entry_id) VALUES (?, ?, ?, 'assignment', '')",
    );
    const event = raw.prepare(
      "INSERT INTO events (tenant_id, screen_id, type, severity, message, resource_type, resource_id, details, runtime, request_id, operation_id, at) VALUES (?, ?, ?, 'info', 'raw', 'screen', ?, '{}', 0, NULL, NULL, ?)",
    );
    const rawAssign = raw.transaction((id: string, playlistId: string, now: number) => {
      update.run(playlistId, playlistId, now, id, projectId);
      unref.run(id);
      ref.run(id, projectId, playlistId);
      event.run(projectId, id, 'screen.updated', id, now);
      event.run(projectId, id, 'screen.manifest_changed', id, now);
    });
    const rawLoop = (playlistId: string) => {
      const now = server.clock.now();
      for (const id of rawScreens) rawAssign(id, playlistId, now);
    };

    const assign: number[] = [];
    const rawAssigns: number[] = [];
    const takeover: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const target = i % 2 === 0 ? b : a;
      const counted = i >= WARMUP;
      const rawMs = await timed(() => rawLoop(target));
      const assignMs = await timed(() => fleet({ type: 'assign', playlist_id: target }));
      server.clock.advance(61_000); // a fresh budget window
      const takeoverMs = await timed(() =>
        fleet({
          type: 'takeover',
          playlist_id: alert,
          until: new Date(server.clock.now() + 3600_000).toISOString(),
          reason: 'bench',
        }),
      );
      if (counted) {
        rawAssigns.push(rawMs);
        assign.push(assignMs);
        takeover.push(takeoverMs);
      }
      if (i < WARMUP + ROUNDS - 1) {
        server.clock.advance(61_000);
        await fleet({ type: 'takeover_clear' });
        server.clock.advance(61_000);
      }
    }
    raw.close();
    const refetch = await timed(() => Promise.all(screens.map((id) => currentManifest(services, id))));
    const reread = await timed(() => Promise.all(screens.map((id) => currentManifest(services, id))));

    const rawP50 = median(rawAssigns);
    table([
      { what: `raw better-sqlite3 loop, ${FLEET} assignments (p50)`, ms: rawP50.toFixed(0), ratio: '1.00x' },
      {
        what: `fleet assign over ${FLEET} screens (p50)`,
        ms: median(assign).toFixed(0),
        ratio: ratio(median(assign), rawP50),
      },
      {
        what: `fleet takeover over ${FLEET} screens (p50)`,
        ms: median(takeover).toFixed(0),
        ratio: ratio(median(takeover), rawP50),
      },
      { what: `${FLEET} manifests read, already minted`, ms: reread.toFixed(0), ratio: '1.00x' },
      { what: `${FLEET} players' refetches after the takeover`, ms: refetch.toFixed(0), ratio: ratio(refetch, reread) },
    ]);
  } finally {
    await server.stop();
  }
}
