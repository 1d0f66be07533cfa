// Uploading media from the dashboard: chosen files go through declare → signed PUT → commit, each
// with its progress bar, and appear in the list when verified; a file that is not what it claims
// fails the server's verification, and one Marquee cannot play is refused before upload, each with
// its reason, leaving nothing in the list.
import { titledPng } from '../support/media-fixtures';
import { expect, test } from './dashboard-fixtures';

test('an uploaded image is verified and listed; failed uploads say why', async ({ dashboard, member }) => {
  await dashboard.open('/media');
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Media');
  // With a mouse, files can be dropped (a phone is offered the button alone: phone-layout.spec.ts).
  await expect(dashboard.page.getByTestId('drop-zone').getByText(/^Drop images/)).toBeVisible();
  await expect(dashboard.page.getByTestId('drop-zone').getByText(/^Images \(PNG/)).toHaveCount(1); // there, and
  await expect(dashboard.page.getByTestId('drop-zone').getByText(/^Images \(PNG/)).toBeHidden();
  const poster = await titledPng(640, 360, '#1b4d7a', 'Poster', 'from the dashboard');
  await dashboard.upload([
    { name: 'dashboard-poster.png', mimeType: 'image/png', buffer: poster },
    { name: 'broken.png', mimeType: 'image/png', buffer: Buffer.from('these bytes are not a PNG image') },
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not media') },
  ]);
  await expect(dashboard.uploadRow('dashboard-poster.png')).toContainText('Ready', { timeout: 30_000 });
  await expect(dashboard.uploadRow('dashboard-poster.png').getByRole('progressbar')).toHaveAttribute('value', '1');
  await expect(dashboard.uploadRow('broken.png')).toContainText('Failed', { timeout: 30_000 });
  await expect(dashboard.uploadRow('broken.png')).not.toContainText('operation op_');
  await expect(dashboard.page.getByTestId('media-card').filter({ hasText: 'broken.png' })).toHaveCount(0);
  await expect(dashboard.uploadRow('notes.txt')).toContainText('Failed');
  await expect(dashboard.uploadRow('notes.txt')).toContainText('Failed: this kind of file is not media Marquee plays');
  await expect(dashboard.page.getByTestId('media-card').filter({ hasText: 'dashboard-poster.png' })).toBeVisible();
});
