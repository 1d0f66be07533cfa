// The dashboard's inline confirmations (archive or delete a screen, delete a media file or a key)
// by keyboard: the confirmation takes the focus when it opens, Escape cancels it, and the focus
// returns to the button that asked; it is never left on the page's body.
import { DashboardPage } from '../pages/dashboard-page';
import { titledPng } from '../support/media-fixtures';
import { expect, test } from './dashboard-fixtures';

test('a confirmation opened by keyboard takes the focus; Escape closes it and gives the focus back', async ({
  browser,
  marquee,
  member,
  project,
  pairedScreen,
}) => {
  await project.uploadMedia(await titledPng(640, 360, '#1b4d7a', 'Poster', 'asked about'), 'image/png', 'asked.png');
  const tab = await browser.newContext();
  const dashboard = new DashboardPage(await tab.newPage(), marquee.dashboardOrigin);
  const { page } = dashboard;
  await dashboard.open(`/screens/${pairedScreen.id}`);
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Lobby');

  const archive = page.getByRole('button', { name: 'Archive…' });
  await archive.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: 'Archive screen' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('button', { name: 'Archive screen' })).toBeHidden();
  await expect(archive).toBeFocused();

  // Cancel by its button: the focus goes back the same way.
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(archive).toBeFocused();

  await dashboard.go('Media');
  const card = page.getByTestId('media-card').filter({ hasText: 'asked.png' });
  const remove = card.getByRole('button', { name: 'Delete…' });
  await remove.focus();
  await page.keyboard.press('Enter');
  await expect(card.getByRole('button', { name: 'Delete asked.png' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(card.getByRole('button', { name: 'Delete asked.png' })).toBeHidden();
  await expect(remove).toBeFocused();
  await tab.close();
});
