// The Applications pages (and Proof of play) pass axe-core with no serious or critical violation at
// 1440×900 and 390×844, and are saved as screenshots to look at.
import path from 'node:path';
import { defaultRuntimeScript, packApplication } from '../../sdk/pack/pack';
import { DashboardAppsPage } from '../pages/dashboard-apps-page';
import { DESKTOP, PHONE } from '../pages/dashboard-page';
import { expect, withOneMemberPerFile } from './dashboard-fixtures';

// Its tests only sign in as the member: one for the file (withOneMemberPerFile).
const test = withOneMemberPerFile();

for (const size of [DESKTOP, PHONE]) {
  test(`applications and proof-of-play pages pass axe-core at ${size.width}×${size.height}`, async ({
    dashboard,
    member,
    project,
    page,
  }) => {
    test.setTimeout(180_000);
    const packed = await packApplication(path.resolve(import.meta.dirname, '../../sdk/examples/kv-counter'), {
      name: `Counter ${size.width}`,
      runtime: await defaultRuntimeScript(),
    });
    const uploaded = await project.request('POST', '/api/v1/applications', {
      body: packed.archive,
      headers: packed.headers,
    });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(202);
    await project.waitForOperation(uploaded.body.operation_id);
    const appId: string = uploaded.body.id;
    for (const [key, value] of [
      ['greeting', 'Hello, lobby'],
      ['settings/theme', '{"background":"#1b4d7a"}'],
    ]) {
      const put = await project.request('PUT', `/api/v1/applications/${appId}/kv/${encodeURIComponent(key)}`, {
        json: { value_base64: Buffer.from(value).toString('base64'), content_type: 'text/plain; charset=utf-8' },
      });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
    }

    const apps = new DashboardAppsPage(dashboard);
    await page.setViewportSize(size);
    await dashboard.open('/');
    await dashboard.signIn(member.email, member.password);
    await dashboard.expectSignedIn(member.name);

    await apps.go('Applications');
    await expect(page.getByRole('row', { name: new RegExp(`Counter ${size.width}`) })).toBeVisible();
    await dashboard.expectAccessible();
    await dashboard.screenshot(`applications-${size.width}.png`);

    await page.getByRole('link', { name: `Counter ${size.width}` }).click();
    await expect(dashboard.heading).toHaveText(`Counter ${size.width}`);
    await apps.kvKey('greeting').click();
    await expect(page.getByTestId('kv-value').getByLabel('Value')).toHaveValue('Hello, lobby');
    await dashboard.expectAccessible();
    await dashboard.screenshot(`application-${size.width}.png`);

    await apps.go('Proof of play');
    await expect(apps.chart('By day')).toBeVisible();
    await apps.chart('By day').getByText('Figures').click();
    await dashboard.expectAccessible();
    await dashboard.screenshot(`proof-of-play-${size.width}.png`);
  });
}
