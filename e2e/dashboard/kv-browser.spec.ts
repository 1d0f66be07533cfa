// The key/value browser on an application's page: a key added and edited there is what the owner
// API reads, and an edit made over a value someone else changed since is refused (If-Match), not
// written over theirs. The list's row agrees with the value shown, and a new key can be added with
// a key selected.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packApplication } from '../../sdk/pack/pack';
import { DashboardAppsPage } from '../pages/dashboard-apps-page';
import { expect, test } from './dashboard-fixtures';

test('a key added and edited on the dashboard is what the API reads; a stale edit is refused', async ({
  dashboard,
  member,
  project,
  page,
}) => {
  const build = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-kv-'));
  fs.writeFileSync(path.join(build, 'index.html'), '<!doctype html><title>Menu board</title>');
  const packed = await packApplication(build, { name: 'Menu board' });
  const uploaded = await project.request('POST', '/api/v1/applications', {
    body: packed.archive,
    headers: packed.headers,
  });
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(202);
  await project.waitForOperation(uploaded.body.operation_id);
  const kv = `/api/v1/applications/${uploaded.body.id}/kv`;
  const read = async () => {
    const res = await project.request('GET', `${kv}/soup`);
    return Buffer.from(res.body.value_base64, 'base64').toString();
  };

  const apps = new DashboardAppsPage(dashboard);
  await dashboard.open(`/applications/${uploaded.body.id}`);
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Menu board');
  // The form points at the keys' list wherever it sits (beside it on a desktop, above it on a phone).
  await expect(page.getByRole('form', { name: 'Add a key' })).toContainText('Choose a key in the list to read');

  await apps.addKey('soup', 'Tomato');
  await expect(dashboard.said('Created soup.')).toBeVisible();
  expect(await read()).toBe('Tomato');

  const value = page.getByTestId('kv-value').getByLabel('Value');
  await expect(value).toHaveValue('Tomato');
  await value.fill('Lentil');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(dashboard.said('Saved soup.')).toBeVisible();
  expect(await read()).toBe('Lentil');

  // A screen (here, the owner API) changes it while the page still shows revision 2.
  const theirs = await project.request('PUT', `${kv}/soup`, {
    json: { value_base64: Buffer.from('Minestrone').toString('base64'), content_type: 'text/plain; charset=utf-8' },
    headers: { 'If-Match': '"2"' },
  });
  expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
  await value.fill('Pea');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'soup was changed since you opened it' })).toBeVisible();
  expect(await read()).toBe('Minestrone');
  // The row shows what the value beside it shows (10 B at revision 3), not the list's older read.
  await expect(page.getByTestId('kv-value')).toContainText('10 B · revision 3');
  await expect(apps.kvRow('soup')).toContainText('10 B');
  await expect(apps.kvRow('soup').getByRole('cell').last()).toHaveText('3');
  await page.getByRole('button', { name: 'Discard my edit' }).click();
  await expect(value).toHaveValue('Minestrone');

  // With a key selected, the form for a new one is a click away.
  await page.getByRole('button', { name: 'New key…' }).click();
  await apps.addKey('bread', 'Rye');
  await expect(dashboard.said('Created bread.')).toBeVisible();
  await expect(apps.kvRow('bread')).toContainText('3 B');
});
