import { describe, expect, it } from 'vitest';
import { imageDoc } from '../playlists/content.fixtures';
import { manifestRevisionId } from '../manifests/manifest-ids';
import { SUPERSEDED_MANIFEST_GRACE_MS } from '../manifests/manifest-store';
import {
  activate,
  anonymousPlayer,
  appPage,
  createPlaylist,
  packagedRelease,
  patchScreen,
  report,
  storedMedia,
  useEnrolledServer,
  validManifest,
  type Player,
} from './runtime.fixtures';

const env = useEnrolledServer();
const { clock } = env;

async function events(screenId: string, type: string) {
  const rows = await env.server.services.store.db
    .selectFrom('events')
    .selectAll()
    .where('screen_id', '=', screenId)
    .where('type', '=', type)
    .orderBy('position')
    .execute();
  return rows.map((r) => ({ ...r, details: r.details ? JSON.parse(r.details) : null }));
}

async function activeRevision(screenId: string) {
  return (
    await env.server.services.store.db
      .selectFrom('screen_runtime_state')
      .selectAll()
      .where('screen_id', '=', screenId)
      .executeTakeFirst()
  )?.active_manifest_revision;
}

async function showing(): Promise<{ p: Player; rev: string; mediaId: string }> {
  const p = await env.player();
  const mediaId = await storedMedia(env.server, env.tenantId, Buffer.from('shown'));
  await patchScreen(env.server, env.token, p.screen.id, {
    playlist_id: await createPlaylist(env.server, env.token, imageDoc(mediaId)),
  });
  const { manifest } = await validManifest(env.server, p);
  return { p, rev: manifest.manifestRevision, mediaId };
}

describe('manifest.activated', () => {
  it('records the active revision and its event before the 202, once per revision', async () => {
    const { p, rev } = await showing();
    const res = await report(env.server, p, {
      severity: 'info',
      code: 'manifest.activated',
      context: { manifest_revision: rev },
    });
    expect(res.status).toBe(202);
    expect(res.body.length).toBe(0);
    expect(res.headers['ratelimit-policy']).toBe('"runtime-report";q=120;w=60');
    expect(manifestRevisionId(p.screen.id, (await activeRevision(p.screen.id))!)).toBe(rev);
    const activated = await events(p.screen.id, 'manifest.activated');
    expect(activated).toHaveLength(1);
    expect(activated[0]).toMatchObject({
      runtime: 0,
      details: { manifest_revision: rev, previous_manifest_revision: null, content_access_generation: 1 },
    });

    await activate(env.server, p, rev); // idempotent for the active revision
    expect(await events(p.screen.id, 'manifest.activated')).toHaveLength(1);
  });

  it('moves to a newer revision and names the previous one', async () => {
    const { p, rev } = await showing();
    await activate(env.server, p, rev);
    await patchScreen(env.server, env.token, p.screen.id, { timezone: 'Europe/Oslo' });
    const next = (await validManifest(env.server, p)).manifest.manifestRevision;
    await activate(env.server, p, next);
    const activated = await events(p.screen.id, 'manifest.activated');
    expect(activated.map((e) => e.details)).toEqual([
      { manifest_revision: rev, previous_manifest_revision: null, content_access_generation: 1 },
      { manifest_revision: next, previous_manifest_revision: rev, content_access_generation: 1 },
    ]);
  });

  it('refuses revisions this screen was never given, and lapsed ones', async () => {
    const { p, rev } = await showing();
    const other = await showing();
    for (const bad of [other.rev, 'man_999_abcdefabcdef', 'man_1_000000000000']) {
      const res = await report(env.server, p, {
        severity: 'info',
        code: 'manifest.activated',
        context: { manifest_revision: bad },
      });
      expect(res.status).toBe(400);
      expect(res.json().errors[0].field).toBe('context.manifest_revision');
    }
    await patchScreen(env.server, env.token, p.screen.id, { timezone: 'Europe/Lisbon' });
    await validManifest(env.server, p);
    clock.advance(SUPERSEDED_MANIFEST_GRACE_MS + 1);
    const lapsed = await report(env.server, p, {
      severity: 'info',
      code: 'manifest.activated',
      context: { manifest_revision: rev },
    });
    expect(lapsed.status).toBe(409);
    expect(await activeRevision(p.screen.id)).toBeUndefined();
  });

  it('needs its exact context and severity info', async () => {
    const { p, rev } = await showing();
    const cases = [
      [{ severity: 'warning', code: 'manifest.activated', context: { manifest_revision: rev } }, 'severity'],
      [{ severity: 'info', code: 'manifest.activated', context: {} }, 'context.manifest_revision'],
      [{ severity: 'info', code: 'manifest.activated', context: null }, 'context'],
      [
        { severity: 'info', code: 'manifest.activated', context: { manifest_revision: rev, extra: 1 } },
        'context.extra',
      ],
      [{ severity: 'info', code: 'manifest.activated' }, 'context'],
      [{ severity: 'info', code: 'Manifest.Activated', context: {} }, 'code'],
      [{ severity: 'fatal', code: 'x', context: {} }, 'severity'],
    ] as const;
    for (const [body, field] of cases) {
      const res = await report(env.server, p, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json().errors[0].field).toBe(field);
    }
  });
});

describe('other reports', () => {
  it('playback.video_started upserts the daily aggregate for media of that manifest', async () => {
    const { p, rev, mediaId } = await showing();
    const body = {
      severity: 'info',
      code: 'playback.video_started',
      context: { media_id: mediaId, manifest_revision: rev, page_id: 'welcome' },
    };
    expect((await report(env.server, p, body)).status).toBe(202);
    clock.advance(1000);
    expect((await report(env.server, p, body)).status).toBe(202);
    const rows = await env.server.services.store.db
      .selectFrom('playback_days')
      .selectAll()
      .where('screen_id', '=', p.screen.id)
      .execute();
    expect(rows).toEqual([
      expect.objectContaining({
        content_id: mediaId,
        content_kind: 'media',
        day: '2026-11-21',
        play_count: 2,
        last_page_id: 'welcome',
        last_manifest_revision: rev,
        last_started_at: clock.now(),
        first_started_at: clock.now() - 1000,
      }),
    ]);
    const stranger = await storedMedia(env.server, env.tenantId, Buffer.from('not shown'));
    const refused = await report(env.server, p, { ...body, context: { ...body.context, media_id: stranger } });
    expect(refused.status).toBe(400);
    expect(refused.json().errors[0].field).toBe('context.media_id');
  });

  it('application.event appends a durable account event naming the application of the active manifest', async () => {
    const p = await env.player();
    const { applicationId, releaseId } = await packagedRelease(env.server, env.tenantId);
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, { name: 'App', pages: [appPage('board', releaseId)] }),
    });
    await activate(env.server, p, (await validManifest(env.server, p)).manifest.manifestRevision);
    const res = await report(env.server, p, {
      severity: 'info',
      code: 'application.event',
      context: { placement_id: 'board', code: 'score.changed' },
    });
    expect(res.status).toBe(202);
    const [event] = await events(p.screen.id, 'application.event');
    expect(event).toMatchObject({
      runtime: 0,
      resource_type: 'application',
      resource_id: applicationId,
      details: { placement_id: 'board', code: 'score.changed', application_id: applicationId, release_id: releaseId },
    });
    const listed = await env.server.request('GET', '/api/v1/events', { token: env.token });
    expect(listed.json().items.some((e: { type: string }) => e.type === 'application.event')).toBe(true);
    const bad = await report(env.server, p, {
      severity: 'info',
      code: 'application.event',
      context: { placement_id: 'board', code: 'has space' },
    });
    expect(bad.status).toBe(400);
  });

  it('any other code is a runtime condition, appended as runtime.reported with its severity', async () => {
    const { p } = await showing();
    const res = await report(env.server, p, {
      severity: 'warning',
      code: 'media.decode_failed',
      context: { media_id: 'med_x', attempts: 3 },
    });
    expect(res.status).toBe(202);
    expect((await report(env.server, p, { severity: 'error', code: 'player.crashed', context: null })).status).toBe(
      202,
    );
    const reported = await events(p.screen.id, 'runtime.reported');
    expect(reported.map((e) => [e.severity, e.details])).toEqual([
      ['warning', { code: 'media.decode_failed', severity: 'warning', context: { media_id: 'med_x', attempts: 3 } }],
      ['error', { code: 'player.crashed', severity: 'error', context: null }],
    ]);
  });

  it('is refused to anonymous sessions and bearers, and past 120 a minute per screen', async () => {
    const { p } = await showing();
    const viewer = await anonymousPlayer(env.server, p.screen);
    expect((await report(env.server, viewer, { severity: 'info', code: 'x', context: {} })).status).toBe(403);
    expect(
      (
        await env.server.request('POST', '/runtime/v1/reports', {
          token: env.token,
          json: { severity: 'info', code: 'x', context: {} },
        })
      ).status,
    ).toBe(401);
    clock.set(Math.ceil(clock.now() / 60_000) * 60_000);
    for (let i = 0; i < 120; i++)
      expect((await report(env.server, p, { severity: 'info', code: 'tick', context: {} })).status).toBe(202);
    const limited = await report(env.server, p, { severity: 'info', code: 'tick', context: {} });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('refuses an oversized report', async () => {
    const { p } = await showing();
    const res = await report(env.server, p, { severity: 'info', code: 'big', context: { blob: 'x'.repeat(20_000) } });
    expect(res.status).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ field: 'body', code: 'too_large' });
  });
});
