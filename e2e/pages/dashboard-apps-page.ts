// Page object for the dashboard's Applications and Proof of play pages (over DashboardPage: the
// same sign-in, navigation and quality checks), driven through roles and labels.
import { expect, type Locator } from '@playwright/test';
import type { DashboardPage } from './dashboard-page';

export class DashboardAppsPage {
  constructor(readonly dashboard: DashboardPage) {}

  get page() {
    return this.dashboard.page;
  }

  async go(section: 'Applications' | 'Proof of play'): Promise<void> {
    await this.dashboard.nav.getByRole('link', { name: section }).click();
    await expect(this.dashboard.heading).toHaveText(section);
  }

  // ---- Applications

  /** Uploads a folder (packed in the browser) as a new application named `name`. */
  async uploadFolder(directory: string, name: string): Promise<void> {
    await this.page.getByLabel('Name (optional)').fill(name);
    await this.page.getByLabel('Choose a folder').setInputFiles(directory);
  }

  /** Uploads an archive file: a new application, or on an application's page a new release. */
  async uploadArchive(file: string): Promise<void> {
    await this.page.getByLabel('Choose an archive').setInputFiles(file);
  }

  get progress(): Locator {
    return this.page.getByTestId('app-upload-progress');
  }

  get currentRelease(): Locator {
    return this.page.getByTestId('current-release');
  }

  get releases(): Locator {
    return this.page.getByTestId('releases').getByRole('listitem');
  }

  // ---- Key/value

  async addKey(key: string, value: string): Promise<void> {
    const form = this.page.getByRole('form', { name: 'Add a key' });
    await form.getByLabel('Key').fill(key);
    await form.getByLabel('Value').fill(value);
    await form.getByRole('button', { name: 'Add key' }).click();
  }

  /** The list's row of a key: key, type, size, revision. */
  kvRow(key: string): Locator {
    // `has` is relative to the row.
    const button = this.page.getByRole('button', { name: key, exact: true });
    return this.page.getByTestId('kv-keys').getByRole('row').filter({ has: button });
  }

  kvKey(key: string): Locator {
    return this.page.getByTestId('kv-keys').getByRole('button', { name: key, exact: true });
  }

  // ---- Proof of play

  chart(name: string): Locator {
    return this.page.getByRole('figure', { name });
  }

  async setRange(from: string, to: string): Promise<void> {
    await this.page.getByLabel('From').fill(from);
    await this.page.getByLabel('To').fill(to);
    await this.page.getByRole('button', { name: 'Show' }).click();
  }
}
