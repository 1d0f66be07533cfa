// The README's quick start as it is written: after `npm start`, five `marquee` commands check the
// server, upload an image, make a playlist of it, pair the screen on glass, which then shows it,
// and list the screen as active and online. The commands run the built CLI (npm run build:cli).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { runCli, type CliResult } from '../sdk/cli/testing/cli-process';
import { expect, test } from './support/fixtures';
import { titledPng } from './support/media-fixtures';

test('the quick start: the CLI pairs the screen on glass and puts an image on it', async ({
  page,
  player,
  marquee,
}) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-quick-start-'));
  const env = { MARQUEE_API_URL: marquee.origin, MARQUEE_CONFIG: path.join(home, 'config.json') };
  const image = path.join(home, 'lobby.jpg');
  fs.writeFileSync(
    image,
    await sharp(await titledPng(1920, 1080, '#1b4d7a', 'Lobby', 'from the quick start'))
      .jpeg()
      .toBuffer(),
  );
  const marqueeCli = async (...args: string[]): Promise<CliResult> => {
    const result = await runCli(args, { env });
    expect(result.code, `marquee ${args.join(' ')}\n${result.stdout}${result.stderr}`).toBe(0);
    return result;
  };

  await page.setViewportSize({ width: 1920, height: 1080 });
  await player.open('/');
  await player.code();
  const shown = await player.pairingCode.innerText(); // as a person reads it: K7Q-X2M

  await marqueeCli('doctor');
  await marqueeCli('media', 'upload', image, '--tag', 'lobby', '--email', 'you@example.com');
  const playlist = (
    await marqueeCli('playlist', 'create', '--name', 'Lobby', '--media-tag', 'lobby', '-q')
  ).stdout.trim();
  expect(playlist).toMatch(/^pl_/);
  const paired = await marqueeCli('screen', 'pair', shown, '--label', 'Lobby', '--playlist', playlist);
  expect(paired.stdout).toMatch(/playlist:\s+pl_/);

  await expect(player.pairingScreen).toBeHidden({ timeout: 10_000 });
  await player.waitForLivePage('images');
  await expect(player.livePage().locator('img')).toBeVisible();
  const listed = await marqueeCli('screen', 'list');
  // id, state, online, last seen, player, now playing (once the player reported it), assigned, revision, label
  expect(listed.stdout).toMatch(
    new RegExp(`scr_\\S+\\s+active\\s+yes\\s+now\\s+browser\\s+(?:${playlist}|-)\\s+${playlist}\\s+\\d+\\s+Lobby`),
  );
  await player.screenshot('cli-quick-start.png');
  fs.rmSync(home, { recursive: true, force: true });
});
