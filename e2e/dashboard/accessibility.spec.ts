// Every page of the dashboard passes axe-core with no serious or critical violation, at a desktop
// (1440×900) and a phone (390×844) size, and is saved as a screenshot to look at.
import { DESKTOP, PHONE } from '../pages/dashboard-page';
import { titledPng } from '../support/media-fixtures';
import { imagePage } from '../support/playlist-documents';
import { expect, withOneMemberPerFile } from './dashboard-fixtures';

// Its tests only sign in as the member: one for the file (withOneMemberPerFile).
const test = withOneMemberPerFile();

const SECTIONS = ['Screens', 'Playlists', 'Media', 'Events', 'Members', 'Billing'] as const;

for (const size of [DESKTOP, PHONE]) {
  test(`every page passes axe-core at ${size.width}×${size.height}`, async ({
    dashboard,
    member,
    project,
    pairedScreen,
    page,
  }) => {
    // axe takes seconds a page on a loaded machine: eight pages.
    test.setTimeout(240_000);
    const poster = await project.uploadMedia(
      await titledPng(1920, 1080, '#1b4d7a', 'Tour', 'a page'),
      'image/png',
      'tour.png',
    );
    const playlist = await project.createPlaylist({
      name: 'Accessibility tour',
      pages: [imagePage('tour-1', poster, 8000), imagePage('tour-2', poster, 8000)],
    });
    await project.patchScreen(pairedScreen.id, {
      playlist_id: playlist.id,
      tags: ['lobby', 'floor1'],
      timezone: 'Europe/Paris',
    });
    // A schedule of two entries, one past midnight, so the screen page shows its week calendar.
    const scheduled = await project.request('PUT', `/api/v1/screens/${pairedScreen.id}/playlist-schedule`, {
      json: {
        entries: [
          {
            playlist_id: playlist.id,
            rule: { enabled: true, windows: [{ days: ['fri', 'sat'], start: '20:00', end: '02:00' }] },
          },
          {
            playlist_id: playlist.id,
            rule: { enabled: true, windows: [{ days: ['mon', 'tue', 'wed'], start: '08:00', end: '12:00' }] },
          },
        ],
      },
    });
    expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);

    // The pairedScreen fixture drove this page as the player; the dashboard takes it over now.
    await page.setViewportSize(size);
    await dashboard.open('/');
    await dashboard.expectAccessible();
    await dashboard.screenshot(`sign-in-${size.width}.png`);
    await dashboard.signIn(member.email, member.password);
    await dashboard.expectSignedIn(member.name);

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
  });
}
