// Fleet control on a real player (playlists swap at a page boundary, so pages last 2 s): a toast over the content, black glass while the display is off
// and content again when it comes back on, and a takeover set by tag over the fleet.
import { expect, test } from './support/fixtures';
import { imagePage } from './support/playlist-documents';

test.use({ viewport: { width: 1920, height: 1080 } });

test('a paired player shows a toast, goes black on display off and back on, and obeys a takeover by tag', async ({
  page,
  player,
  pairedScreen: screen,
  project,
  library,
}) => {
  test.setTimeout(90_000);
  const { media } = library;
  const lobby = await project.createPlaylist({
    name: 'Lobby loop',
    pages: [imagePage('welcome', media.welcome, 2000)],
  });
  await project.patchScreen(screen.id, { playlist_id: lobby.id });
  await player.waitForLivePage('welcome', 30_000);

  await test.step('a toast appears over the content, then goes after its duration', async () => {
    const res = await project.request('POST', `/api/v1/screens/${screen.id}/toast`, {
      json: { level: 'alert', text: 'The lobby closes at 18:00.\nPlease use the north exit.', duration_ms: 4000 },
    });
    expect(res.status).toBe(202);
    await expect(player.toast).toBeVisible({ timeout: 10_000 });
    await expect(player.toast).toHaveText(/north exit/);
    await expect(player.toast).toHaveAttribute('data-level', 'alert');
    // Never the whole screen: a band at the bottom, the content around it still on glass.
    const box = (await player.toast.boundingBox())!;
    expect(box.width * box.height).toBeLessThan(1920 * 1080 * 0.3);
    await page.waitForTimeout(400); // past the entrance animation
    await player.screenshot('toast-alert.png');
    await expect(player.toast).toBeHidden({ timeout: 10_000 });
  });

  await test.step('display off is black glass; display on shows the content again', async () => {
    await project.request('POST', `/api/v1/screens/${screen.id}/display`, { json: { power: 'off' } });
    await expect(player.displayOff).toBeVisible({ timeout: 10_000 });
    await player.screenshot('display-off.png');
    await project.request('POST', `/api/v1/screens/${screen.id}/display`, { json: { power: 'on' } });
    await expect(player.displayOff).toBeHidden({ timeout: 10_000 });
    await project.request('POST', `/api/v1/screens/${screen.id}/display/clear`);
    await expect(player.displayOff).toBeHidden();
  });

  await test.step('a takeover of every screen tagged lobby puts its playlist on glass, and clearing it ends it', async () => {
    const alert = await project.createPlaylist({
      name: 'Evacuation',
      pages: [imagePage('quiet', media.quiet, 2000)],
    });
    const tag = `lobby${Date.now() % 1_000_000}`;
    await project.screenActions({ ids: [screen.id] }, { type: 'add_tags', tags: [tag] });
    const result = await project.screenActions(
      { tag },
      {
        type: 'takeover',
        playlist_id: alert.id,
        until: new Date(Date.now() + 3600_000).toISOString(),
        reason: 'evacuation drill',
      },
    );
    expect(result.results).toMatchObject([{ screen_id: screen.id, ok: true }]);
    await player.waitForLivePage('quiet', 30_000);
    await project.screenActions({ tag }, { type: 'takeover_clear' });
    await player.waitForLivePage('welcome', 30_000);
  });
});
