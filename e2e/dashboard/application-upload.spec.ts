// Uploading an application from the dashboard: a build folder is packed in the browser and
// published as the application's first release; archives uploaded on its page (a tar.gz, then a
// zip repacked in the browser) become the next releases, and the page names the newest current. Each step is the route an agent's upload uses.
// What the packer left out is said, and a zip entry that climbs out of the root is refused by its rule.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { DashboardAppsPage } from '../pages/dashboard-apps-page';
import { expect, test } from './dashboard-fixtures';

function buildFolder(marker: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-app-'));
  const build = path.join(dir, 'build');
  fs.mkdirSync(path.join(build, 'assets'), { recursive: true });
  fs.writeFileSync(
    path.join(build, 'index.html'),
    `<!doctype html><title>${marker}</title><script src="assets/app.js"></script>`,
  );
  fs.writeFileSync(path.join(build, 'assets', 'app.js'), `document.title = ${JSON.stringify(marker)};`);
  fs.writeFileSync(path.join(build, 'assets', 'app.js.map'), '{}');
  return build;
}

test('a folder uploads as an application, and a tar.gz and a zip as its next releases', async ({
  dashboard,
  member,
}) => {
  const apps = new DashboardAppsPage(dashboard);
  await dashboard.open('/applications');
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Applications');

  await apps.uploadFolder(buildFolder('first'), 'Lobby board');
  // Published, the page moves to the application, which names the release as current and keeps
  // the upload's outcome: published as that release, and what the packer left out.
  await expect(dashboard.heading).toHaveText('Lobby board', { timeout: 30_000 });
  const first = (await apps.currentRelease.textContent())?.trim() ?? '';
  expect(first).toMatch(/^rel_/);
  await expect(dashboard.said(`Published build as release ${first}. Left out: assets/app.js.map.`)).toBeVisible();
  await expect(dashboard.page.getByTestId('application-state')).toHaveText('Ready');

  const second = buildFolder('second');
  const archive = path.join(path.dirname(second), 'board.tar.gz');
  execFileSync('tar', ['-czf', archive, '-C', second, '.']);
  await apps.uploadArchive(archive);
  await expect(apps.progress).toContainText('Published board.tar.gz as release rel_', { timeout: 30_000 });
  await expect(apps.currentRelease).not.toHaveText(first);
  await expect(apps.currentRelease).toHaveText(/^rel_/);
  await expect(apps.releases).toHaveCount(1);

  // A .zip of the build folder (as zip tools write it) is repacked in the browser as the next release.
  const third = buildFolder('third');
  const zipped = path.join(path.dirname(third), 'board.zip');
  execFileSync('zip', ['-qr', zipped, 'build'], { cwd: path.dirname(third) });
  await apps.uploadArchive(zipped);
  await expect(apps.progress).toContainText('Published board.zip as release rel_', { timeout: 30_000 });
  await expect(apps.progress).toContainText('Left out: assets/app.js.map.');
  await expect(apps.releases).toHaveCount(2);

  // A zip whose entry names a path outside its root is refused, the server's rule named.
  const evil = path.join(path.dirname(third), 'evil.zip');
  const outside = path.join(path.dirname(third), 'evil.html');
  fs.writeFileSync(outside, '<p>outside</p>');
  execFileSync('zip', ['-q', evil, 'index.html', '../evil.html'], { cwd: third });
  await apps.uploadArchive(evil);
  await expect(apps.progress).toContainText(
    'evil.zip was not published: ../evil.html: contains a ".." segment (parent_segment)',
  );
  await expect(apps.releases).toHaveCount(2);

  await apps.go('Applications');
  await expect(dashboard.page.getByRole('row', { name: /Lobby board/ })).toContainText('Ready');
});
