// Uploading an application from the dashboard: a build folder is packed in the browser and
// published as the application's first release; archives uploaded on its page (a tar.gz, then a
// zip repacked in the browser) become the next releases, and the page names the newest current. Each step is the route an agent's upload uses.
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
  // Published, the page moves to the application, which names the release as current.
  await expect(dashboard.heading).toHaveText('Lobby board', { timeout: 30_000 });
  const first = (await apps.currentRelease.textContent())?.trim() ?? '';
  expect(first).toMatch(/^rel_/);
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
  await expect(apps.releases).toHaveCount(2);

  await apps.go('Applications');
  await expect(dashboard.page.getByRole('row', { name: /Lobby board/ })).toContainText('Ready');
});
