// Pairing on glass: the code in its dashed form, the claim through the API, completion and the
// device session, and a reload that resumes the paired session instead of pairing again.
import { ControlApi } from './support/control-api';
import { expect, test } from './support/fixtures';

test('a screen shows its code, is paired through the API, and stays paired across a reload', async ({
  page,
  player,
  marquee,
}) => {
  // A project of its own: the spec counts the project's screens.
  const api = new ControlApi(marquee.origin);
  await api.enroll();

  await page.setViewportSize({ width: 1920, height: 1080 });
  await player.open('/');
  await expect(player.pairingScreen).toBeVisible();
  const code = await player.code();
  await expect(page.locator('.pairing-qr svg')).toBeVisible();
  // A browser's code lives ten minutes and is replaced a minute early.
  await expect(player.pairingExpiry).toHaveText('This code is replaced in about 9 minutes.');
  await player.screenshot('pairing-1920x1080.png');
  await page.setViewportSize({ width: 1080, height: 1920 });
  await expect(player.pairingCode).toHaveText(`${code.slice(0, 3)}-${code.slice(3)}`);
  await player.screenshot('pairing-1080x1920.png');
  await page.setViewportSize({ width: 1920, height: 1080 });

  const claim = await api.pair(code, 'Lobby');
  await expect(player.pairingScreen).toBeHidden({ timeout: 10_000 });
  await expect.poll(async () => (await api.screen(claim.screen.id)).state).toBe('active');
  const cookies = await page.context().cookies();
  expect(cookies.map((c) => c.name)).toEqual(
    expect.arrayContaining(['__Host-marquee-device', '__Host-marquee-runtime']),
  );

  // After a reload the player must resume the paired session: a device session for the same screen,
  // never a new pairing session, and the pairing screen never comes back.
  const runtimeCalls: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/runtime/v1/')) runtimeCalls.push(`${request.method()} ${url.pathname}`);
  });
  await page.reload();
  await expect
    .poll(() => player.session(), { timeout: 10_000 })
    .toEqual(expect.objectContaining({ paired: true, publicUrl: claim.public_url }));
  for (let i = 0; i < 6; i++) {
    await expect(player.pairingScreen).toBeHidden();
    await page.waitForTimeout(500);
  }
  await expect(player.stage).toBeAttached();
  expect(runtimeCalls).toContain('POST /runtime/v1/device-sessions');
  expect(runtimeCalls).not.toContain('POST /runtime/v1/pairing-sessions');
  // Still one screen, active.
  const screens = await api.request('GET', '/api/v1/screens');
  expect(screens.body.items.map((s: { id: string; state: string }) => [s.id, s.state])).toEqual([
    [claim.screen.id, 'active'],
  ]);
});
