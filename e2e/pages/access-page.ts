// Page object for the access page on the dashboard origin: what a person does there (sign up by an
// invitation, sign in by password or passkey, reset by email, approve an agent), read and driven
// through roles and labels as a screen reader would.
import { expect, type CDPSession, type Locator, type Page } from '@playwright/test';

export class AccessPage {
  readonly status: Locator;
  readonly heading: Locator;

  constructor(
    readonly page: Page,
    readonly origin: string,
  ) {
    this.status = page.getByRole('status');
    this.heading = page.getByRole('heading', { level: 1 });
  }

  /**
   * A platform authenticator with user verification (Chromium's virtual authenticator over CDP), so
   * passkey ceremonies run for real in this page's browser context.
   */
  async addVirtualAuthenticator(): Promise<{ cdp: CDPSession; authenticatorId: string }> {
    const cdp = await this.page.context().newCDPSession(this.page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return { cdp, authenticatorId };
  }

  async open(pathOrUrl = '/access'): Promise<void> {
    const response = await this.page.goto(new URL(pathOrUrl, this.origin).href);
    expect(response?.status()).toBe(200);
  }

  /** Opens a link (invitation, reset) and waits for the page to take its token out of the address. */
  async openLink(url: string): Promise<void> {
    // A fresh document, as a link opened from a mail client gets (not a same-page fragment change).
    await this.page.goto('about:blank');
    await this.open(url);
    await expect.poll(() => new URL(this.page.url()).hash).toBe('');
  }

  async expectSignedIn(name: string, projectName?: string): Promise<void> {
    await expect(this.heading).toHaveText('Signed in');
    await expect(this.page.locator('#home-who')).toContainText(name);
    if (projectName) await expect(this.page.locator('#home-who')).toContainText(projectName);
  }

  async signUpWithPassword(name: string, password: string): Promise<void> {
    await expect(this.heading).toHaveText('Join a project');
    await this.page.getByLabel('Your name').fill(name);
    await this.page.getByLabel(/Or choose a password/).fill(password);
    await this.page.getByRole('button', { name: 'Join with this password' }).click();
  }

  async signUpWithPasskey(name: string): Promise<void> {
    await expect(this.heading).toHaveText('Join a project');
    await this.page.getByLabel('Your name').fill(name);
    await this.page.getByRole('button', { name: 'Use a passkey' }).click();
  }

  async signInWithPassword(email: string, password: string): Promise<void> {
    await expect(this.heading).toHaveText('Sign in');
    await this.page.getByLabel('Email address', { exact: true }).first().fill(email);
    await this.page.getByLabel('Password', { exact: true }).fill(password);
    await this.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  async signInWithPasskey(): Promise<void> {
    await expect(this.heading).toHaveText('Sign in');
    await this.page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  }

  async signOut(): Promise<void> {
    await this.page.getByRole('button', { name: 'Sign out' }).click();
    await expect(this.heading).toHaveText('Sign in');
  }

  async askForSignInLink(email: string): Promise<void> {
    await this.page.locator('#reset-email').fill(email);
    await this.page.getByRole('button', { name: 'Mail me a link' }).click();
    await expect(this.status).toContainText('a mail with a link is on its way');
  }

  async setNewPassword(password: string): Promise<void> {
    await expect(this.heading).toHaveText('Make a new way to sign in');
    await this.page.getByLabel(/Or a new password/).fill(password);
    await this.page.getByRole('button', { name: 'Save the new password' }).click();
  }

  async approveAgent(code: string): Promise<void> {
    await expect(this.heading).toHaveText('Connect an agent');
    await this.page.getByLabel('The code your agent shows').fill(code);
    await this.page.getByRole('button', { name: 'Approve' }).click();
    await expect(this.status).toContainText('Approved');
  }
}
