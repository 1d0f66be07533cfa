// The agent's database holds its local signing key, a pending pairing credential and the sync
// group's LAN key: readable by the kiosk's user only, whatever the data dir was made with.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { AgentDb } from './agent-db';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function modeOf(file: string): string {
  return (fs.statSync(file).mode & 0o777).toString(8);
}

/** A data dir as an installer makes it by hand (`mkdir -p`): 0755 under the usual umask. */
function handMadeDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-kiosk-mode-'));
  dirs.push(dir);
  fs.chmodSync(dir, 0o755);
  return dir;
}

it('closes a data dir made by hand to its owner, and creates agent.db and its WAL files 0600', () => {
  const dir = handMadeDataDir();
  const umask = process.umask(0o022);
  try {
    const db = new AgentDb(dir);
    db.set('local-key', 'secret');
    expect(modeOf(dir)).toBe('700');
    for (const name of ['agent.db', 'agent.db-wal', 'agent.db-shm'])
      expect(modeOf(path.join(dir, name)), name).toBe('600');
    db.close();
  } finally {
    process.umask(umask);
  }
});

it('closes an agent.db an earlier version left readable by everyone', () => {
  const dir = handMadeDataDir();
  for (const name of ['agent.db', 'agent.db-wal', 'agent.db-shm'])
    fs.writeFileSync(path.join(dir, name), '', { mode: 0o644 });
  fs.chmodSync(path.join(dir, 'agent.db'), 0o644);
  const db = new AgentDb(dir);
  expect(modeOf(path.join(dir, 'agent.db'))).toBe('600');
  expect(modeOf(path.join(dir, 'agent.db-wal'))).toBe('600');
  db.close();
});
