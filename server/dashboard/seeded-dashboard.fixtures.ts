// A project seeded at scale for the dashboard's browser tests and benchmarks: screens and media
// written through the store (pairing or uploading thousands through the API is bounded by its rate
// limits and plan), a member invited and signed up through the API, and a Chromium context signed
// in through the app's own form.
import type { Browser, Page } from 'playwright-core';
import { linkToken, type SmtpCapture } from '../mail/mail.fixtures';
import { insertScreensShowing } from '../manifests/manifests.fixtures';
import { imageDoc, insertMedia } from '../playlists/content.fixtures';
import { DashboardBrowser } from '../sign-in/dashboard.fixtures';
import { randomKey, type TestServer } from '../testing/harness';

export const SEEDED_PASSWORD = 'a seeded passphrase of some length';
/** A cheap scrypt cost: the callers measure the browser, not the hash. */
export const SEEDED_PASSWORD_COST = { N: 1024, r: 8, p: 1 };

/**
 * A project with `screens` screens (labelled "Screen 0" …) and `media` media, and the address of a
 * member who can sign in with SEEDED_PASSWORD. The media are videos bar one image: a card shows a
 * video's kind instead of fetching a preview, so no image traffic is measured.
 */
export async function seedProject(
  server: TestServer,
  smtp: SmtpCapture,
  size: { screens: number; media: number },
): Promise<string> {
  const { token, projectId } = await server.enroll();
  const poster = await insertMedia(server, projectId);
  const playlist = await server.request('POST', '/api/v1/playlists', {
    token,
    json: imageDoc(poster),
    idempotencyKey: randomKey(),
  });
  if (playlist.status !== 201) throw new Error(`playlist: ${playlist.status} ${playlist.text}`);
  await insertScreensShowing(server.services, projectId, playlist.json().id, size.screens);
  for (let i = 1; i < size.media; i++) await insertMedia(server, projectId, { kind: 'video' });

  const email = `member-${randomKey()}@example.com`;
  const invited = await server.request('POST', '/api/v1/invitations', {
    token,
    idempotencyKey: randomKey(),
    json: { kind: 'project_member', emails: [email] },
  });
  if (invited.status !== 201) throw new Error(`invitation: ${invited.status} ${invited.text}`);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('#invite='));
  const member = new DashboardBrowser(server);
  const claim = await member.request('POST', '/dashboard/v1/invitations/claim', {
    json: { token: linkToken(mail, 'invite') },
  });
  if (claim.status !== 200) throw new Error(`claim: ${claim.status} ${claim.text}`);
  const joined = await member.request('POST', '/dashboard/v1/signup/password', {
    json: { display_name: 'Seeded member', password: SEEDED_PASSWORD },
  });
  if (joined.status !== 200) throw new Error(`signup: ${joined.status} ${joined.text}`);
  return email;
}

/** A page of a new context at `viewport`, signed in as `email`, with `initScript` before the app's scripts. */
export async function signedIn(
  browser: Browser,
  origin: string,
  email: string,
  viewport: { width: number; height: number },
  initScript?: () => void,
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  if (initScript) await context.addInitScript(initScript);
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill(SEEDED_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor({ timeout: 30_000 });
  return page;
}
