// Every page of the dashboard passes axe-core with no serious or critical violation, at a desktop
// (1440×900) and a phone (390×844) size, and is saved as a screenshot to look at.
import { DESKTOP, PHONE } from '../pages/dashboard-page';
import { imagePage } from '../support/playlist-documents';
import { expect, test } from './dashboard-fixtures';

const SECTIONS = ['Screens', 'Playlists', 'Media', 'Events', 'Members', 'Billing'] as const;

test('every page is accessible at desktop and phone sizes', async ({
  dashboard,
  member,
  project,
  library,
  pairedScreen,
  page,
}) => {
  test.setTimeout(120_000);
  const playlist = await project.createPlaylist({
    name: 'Accessibility tour',
    pages: [imagePage('tour-1', library.media.welcome, 8000), imagePage('tour-2', library.media.menu, 8000)],
  });
  // The pairedScreen fixture drove this page as the player; the dashboard takes it over now.
  expect(pairedScreen.id).toBeTruthy();

  await page.setViewportSize(DESKTOP);
  await dashboard.open('/');
  await dashboard.expectAccessible();
  await dashboard.screenshot('sign-in-1440.png');
  await dashboard.signIn(member.email, member.password);
  await dashboard.expectSignedIn(member.name);

  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    for (const section of SECTIONS) {
      await dashboard.go(section);
      await dashboard.expectAccessible();
      await dashboard.screenshot(`${section.toLowerCase()}-${size.width}.png`);
    }
    await dashboard.open(`/screens/${pairedScreen.id}`);
    await expect(dashboard.heading).toHaveText('Lobby');
    await dashboard.expectAccessible();
    await dashboard.screenshot(`screen-${size.width}.png`);
    await dashboard.open(`/playlists/${playlist.id}`);
    await expect(dashboard.heading).toHaveText('Accessibility tour');
    await dashboard.expectAccessible();
    await dashboard.screenshot(`playlist-${size.width}.png`);
  }
});
