// Uploading media from the dashboard: chosen files go through declare → signed PUT → commit, each
// with its progress bar, and appear in the list when verified; a file Marquee cannot play fails
// with a reason and leaves nothing behind.
import { titledPng } from '../support/media-fixtures';
import { expect, test } from './dashboard-fixtures';

test('an uploaded image is verified and listed; an unplayable file fails with a reason', async ({
  dashboard,
  member,
}) => {
  await dashboard.open('/media');
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Media');
  const poster = await titledPng(640, 360, '#1b4d7a', 'Poster', 'from the dashboard');
  await dashboard.upload([
    { name: 'dashboard-poster.png', mimeType: 'image/png', buffer: poster },
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not media') },
  ]);
  await expect(dashboard.uploadRow('dashboard-poster.png')).toContainText('Ready', { timeout: 30_000 });
  await expect(dashboard.uploadRow('dashboard-poster.png').getByRole('progressbar')).toHaveAttribute('value', '1');
  await expect(dashboard.uploadRow('notes.txt')).toContainText('Failed');
  await expect(dashboard.uploadRow('notes.txt')).toContainText('not media Marquee plays');
  await expect(dashboard.page.getByTestId('media-card').filter({ hasText: 'dashboard-poster.png' })).toBeVisible();
});
