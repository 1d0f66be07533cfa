// A changed playlist reaches a playing screen: it is swapped in at a page boundary while the
// soundtrack above the pages plays on uninterrupted, and the player reports it as activated.
import { expect, test } from '../support/fixtures';
import { canvas, image, imagePage } from '../support/playlist-documents';

test.use({ viewport: { width: 1920, height: 1080 } });

test('a changed playlist is swapped in at a page boundary under an unbroken soundtrack, and reported as activated', async ({
  page,
  player,
  pairedScreen: screen,
  project,
  library,
}) => {
  test.setTimeout(90_000);
  const { media } = library;
  const playlist = await project.createPlaylist({
    name: 'Lobby loop',
    audio: { tracks: [{ media_id: media.music }] },
    pages: [imagePage('welcome', media.welcome, 1500), imagePage('menu', media.menu, 1500)],
  });
  await project.patchScreen(screen.id, { playlist_id: playlist.id });
  await player.waitForLivePage('welcome', 30_000);

  await test.step('the soundtrack plays above the pages', async () => {
    const audio = player.soundtrack();
    await expect.poll(() => audio.evaluate((a: HTMLAudioElement) => !a.paused && a.currentTime > 0)).toBe(true);
  });

  await test.step('the new playlist is swapped in under the playing soundtrack', async () => {
    const audio = player.soundtrack();
    const before = (await project.screen(screen.id)).manifest_revision;
    await project.replacePlaylist(playlist.id, {
      name: 'Quiet loop',
      audio: { tracks: [{ media_id: media.music }] },
      pages: ['one', 'two', 'three'].map((id, i) => ({
        id,
        canvas: canvas('#000000FF'),
        transition: { type: (['crossfade', 'swipe-right', 'swipe-down'] as const)[i], duration_ms: 200 },
        advance: { mode: 'duration', after_ms: 1000 },
        placements: [image('hero', i === 0 ? media.quiet : i === 1 ? media.menu : media.welcome)],
      })),
    });
    expect((await project.screen(screen.id)).manifest_revision).toBeGreaterThan(before);
    // Sample the soundtrack on every frame while the swap and 20 page changes happen.
    const samples = player.recordSoundtrack(21);
    await player.waitForLivePage('one', 30_000);
    const { times, pages } = await samples;
    expect(pages.slice(-20).every((p) => ['one', 'two', 'three'].includes(p))).toBe(true);
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThanOrEqual(times[i - 1]!);
    expect(await audio.evaluate((a: HTMLAudioElement) => a.paused)).toBe(false);
    await player.waitForLivePage('two', 10_000);
    await page.waitForTimeout(500); // past the transition: the page fills the viewport
    await player.screenshot('playing-after-swap.png');
  });

  await test.step('the player reports the new manifest as activated', async () => {
    const revision = await player.activeRevision();
    await expect
      .poll(
        async () =>
          (await project.events())
            .filter((e) => e.type === 'manifest.activated')
            .map((e) => JSON.stringify(e))
            .join('\n'),
        { timeout: 10_000 },
      )
      .toContain(revision);
  });
});
