import fs from 'node:fs';
import { expect, test } from '@playwright/test';

test('the runtime plane serves the built player shell', async ({ page }) => {
  const response = await page.goto('/');
  expect(response?.status()).toBe(200);
  await expect(page.getByRole('heading', { name: 'Marquee' })).toBeVisible();
  fs.mkdirSync('e2e/artifacts', { recursive: true });
  await page.screenshot({ path: 'e2e/artifacts/player-shell.png' });
});
