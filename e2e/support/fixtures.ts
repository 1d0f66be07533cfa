// The fixtures every e2e spec stands on. Per worker: a Marquee server of its own (a spec may kill
// it; it must start it again before it ends, and a failed test gets a new worker anyway), the news
// site that iframe placements show, one enrolled project, and the media and application the
// playback specs assign (uploaded once, by the first spec that asks). Per test: a fresh browser
// context with the player page object, and on request a screen paired to it through the API.
import path from 'node:path';
import { test as base, expect } from '@playwright/test';
import { defaultRuntimeScript, packApplication } from '../../sdk/pack/pack';
import { SmtpCapture } from '../../server/mail/mail.fixtures';
import { PlayerPage } from '../pages/player-page';
import { recordConsole } from '../../sdk/testing/chromium';
import { ControlApi } from './control-api';
import { MarqueeServer } from './marquee-server';
import { silentMp3, titledPng, webmClip } from './media-fixtures';
import { startNewsSite, type NewsSite } from './news-site';
import { KioskAgentProcess } from './kiosk-agent';
import { kioskPort, NEWS_PORT, serverPort } from './ports';

/** Media ids and the application release that playlists of the playback specs refer to. */
export interface Library {
  media: { welcome: string; menu: string; evening: string; quiet: string; clip: string; music: string };
  releaseId: string;
}

export interface PairedScreen {
  id: string;
}

interface WorkerFixtures {
  /** The worker's mail server on loopback: the server sends every mail there (MARQUEE_SMTP_URL). */
  mailbox: SmtpCapture;
  marquee: MarqueeServer;
  news: NewsSite;
  /** The worker's enrolled project (the playback specs' tenant; specs that count screens enroll their own). */
  project: ControlApi;
  library: Library;
}

interface TestFixtures {
  player: PlayerPage;
  /** A kiosk agent of this test (fresh data dir) on the worker's server, serving http://127.0.0.1:<port>. */
  kiosk: KioskAgentProcess;
  /** A new screen labelled Lobby, paired to this test's player through the API and off the pairing screen. */
  pairedScreen: PairedScreen;
}

export const test = base.extend<TestFixtures, WorkerFixtures>({
  mailbox: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern
    async ({}, use) => {
      const mailbox = await SmtpCapture.start();
      await use(mailbox);
      await mailbox.stop();
    },
    { scope: 'worker' },
  ],
  marquee: [
    async ({ mailbox }, use, workerInfo) => {
      const server = new MarqueeServer(serverPort(workerInfo.parallelIndex), { MARQUEE_SMTP_URL: mailbox.url });
      await server.start();
      await use(server);
      await server.stop();
    },
    // Waiting for the port (at most 30 s) and the start (at most a minute) fit in it.
    { scope: 'worker', timeout: 120_000 },
  ],
  // Any test may meet the news site (an iframe placement), so it is up whenever the worker is.
  news: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern
    async ({}, use) => {
      const site = await startNewsSite(NEWS_PORT);
      await use(site);
      await site.stop();
    },
    { scope: 'worker', auto: true },
  ],
  project: [
    async ({ marquee }, use) => {
      const api = new ControlApi(marquee.origin);
      await api.enroll();
      await use(api);
    },
    { scope: 'worker' },
  ],
  library: [
    async ({ project, marquee, browser }, use) => {
      const [welcome, menu, evening, quiet, clip] = await Promise.all([
        titledPng(1920, 1080, '#1b4d7a', 'Welcome', 'to the lobby'),
        titledPng(1920, 1080, '#7a3b1b', 'Menu', 'soup of the day'),
        titledPng(1920, 1080, '#3b1b7a', 'Evening', 'never shown: its rule is disabled'),
        titledPng(1920, 1080, '#1b7a4d', 'Quiet', 'second playlist'),
        webmClip(browser, marquee.origin, { seconds: 3, width: 640, height: 360, color: '#2a7ab0' }),
      ]);
      const media = {
        welcome: await project.uploadMedia(welcome, 'image/png', 'welcome.png'),
        menu: await project.uploadMedia(menu, 'image/png', 'menu.png'),
        evening: await project.uploadMedia(evening, 'image/png', 'evening.png'),
        quiet: await project.uploadMedia(quiet, 'image/png', 'quiet.png'),
        clip: await project.uploadMedia(clip, 'video/webm', 'clip.webm'),
        music: await project.uploadMedia(silentMp3(240), 'audio/mpeg', 'music.mp3'),
      };
      const packed = await packApplication(path.resolve(import.meta.dirname, '../../sdk/examples/kv-counter'), {
        runtime: await defaultRuntimeScript(),
        name: 'KV counter',
      });
      const uploaded = await project.request('POST', '/api/v1/applications', {
        body: packed.archive,
        headers: { ...packed.headers, 'Content-Type': 'application/gzip' },
      });
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(202);
      const op = await project.waitForOperation(uploaded.body.operation_id, 60_000);
      expect(op.state, JSON.stringify(op)).toBe('succeeded');
      await use({ media, releaseId: uploaded.body.release_id });
    },
    { scope: 'worker', timeout: 120_000 },
  ],

  baseURL: async ({ marquee }, use) => use(marquee.origin),
  // A failed test prints what the player's page and its frames logged, to read rather than guess at.
  player: async ({ page }, use, testInfo) => {
    const lines = recordConsole(page);
    await use(new PlayerPage(page));
    if (testInfo.status !== testInfo.expectedStatus)
      console.error(['--- player console', ...lines].map((l) => `  ${l}`).join('\n'));
  },
  kiosk: async ({ marquee }, use, testInfo) => {
    const agent = new KioskAgentProcess(kioskPort(testInfo.parallelIndex), marquee.origin);
    await agent.start();
    await use(agent);
    await agent.stop();
  },
  pairedScreen: async ({ player, project }, use) => {
    await player.open('/');
    const claim = await project.pair(await player.code(), 'Lobby');
    await expect(player.pairingScreen).toBeHidden({ timeout: 10_000 });
    await use({ id: claim.screen.id });
  },
});

export { expect };
