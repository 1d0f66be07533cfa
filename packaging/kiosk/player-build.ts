// The kiosk serves the same player build as the server (dist/player). `npm run kiosk` builds it
// when it is missing or older than the player's sources, so a checkout just works and a restart
// of a built kiosk does not wait for a build.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const PLAYER_DIR = path.join(ROOT, 'dist', 'player');
const SOURCES = ['player', 'sdk', 'vite.config.ts'];

function newest(entry: string): number {
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const name of fs.readdirSync(entry)) {
    if (name === 'node_modules' || name.endsWith('.test.ts') || name.endsWith('.test.tsx')) continue;
    latest = Math.max(latest, newest(path.join(entry, name)));
  }
  return latest;
}

/** Whether dist/player is missing or older than what it is built from. */
export function playerBuildStale(root = ROOT): boolean {
  const shell = path.join(root, 'dist', 'player', 'index.html');
  if (!fs.existsSync(shell)) return true;
  const built = fs.statSync(shell).mtimeMs;
  return SOURCES.some((s) => fs.existsSync(path.join(root, s)) && newest(path.join(root, s)) > built);
}

export function ensurePlayerBuild(log: (message: string) => void): void {
  if (!playerBuildStale()) return;
  log('building the player (npm run build:web)');
  const result = spawnSync('npm', ['run', 'build:web', '--silent'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (result.status !== 0) throw new Error('the player build failed');
}
