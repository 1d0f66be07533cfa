// The systemd unit and environment file that docs/operations.md installs: the environment file is
// a configuration the server accepts as it stands (every name a setting or the AWS SDK's), and the
// unit starts the server's real entry with the drain signal the server handles.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, SETTINGS } from '../../server/config';

const here = import.meta.dirname;
const repo = path.resolve(here, '../..');

function environmentFile(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(path.join(here, 'marquee-server.env'), 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    expect(at, `not NAME=value: ${line}`).toBeGreaterThan(0);
    env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

function unitDirectives(): Map<string, string> {
  const directives = new Map<string, string>();
  for (const line of fs.readFileSync(path.join(here, 'marquee-server.service'), 'utf8').split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (match) directives.set(match[1]!, match[2]!);
  }
  return directives;
}

describe('the server’s systemd unit and environment file', () => {
  it('sets only names the server or the AWS SDK reads, and the server accepts them as they stand', () => {
    const env = environmentFile();
    const known = new Set(Object.values(SETTINGS).map((s) => s.env));
    for (const name of Object.keys(env)) expect(known.has(name) || name.startsWith('AWS_'), name).toBe(true);
    const config = loadConfig(env);
    expect(config.databaseUrl).toMatch(/^postgres:\/\//);
    expect(config.blobUrl).toMatch(/^s3:\/\//);
    expect(config.trustedProxies.length).toBeGreaterThan(0);
  });

  it('is served by the replicas’ nginx block of docs/operations.md: every origin has its server name', () => {
    const operations = fs.readFileSync(path.join(repo, 'docs/operations.md'), 'utf8');
    const block = /```nginx\n(upstream marquee \{\n {2}server 10\.0\.0\.11[\s\S]*?)```/.exec(operations);
    expect(block, 'the replicas’ nginx block').not.toBeNull();
    const names = /^\s*server_name ([^;]+);/m.exec(block![1]!)![1]!.split(/\s+/);
    const served = (host: string) =>
      names.some((name) => (name.startsWith('*.') ? host.endsWith(name.slice(1)) : host === name));
    const config = loadConfig(environmentFile());
    const release = new URL(config.releaseOrigin.replace('{label}', 'a'.repeat(40))).hostname;
    for (const origin of [config.controlOrigin, config.playOrigin, config.dashboardOrigin])
      expect(served(new URL(origin).hostname), origin).toBe(true);
    expect(served(release), release).toBe(true);
  });

  it('starts the server’s entry in the install directory, drains on SIGTERM and restarts it', () => {
    const unit = unitDirectives();
    const [node, ...args] = unit.get('ExecStart')!.split(' ');
    expect(node).toBe('/usr/bin/node');
    expect(args.slice(0, 2)).toEqual(['--import', 'tsx']);
    expect(fs.existsSync(path.join(repo, args[2]!))).toBe(true);
    expect(unit.get('WorkingDirectory')).toBe('/opt/marquee');
    expect(unit.get('EnvironmentFile')).toBe('/etc/marquee/marquee.env');
    expect(unit.get('KillSignal')).toBe('SIGTERM');
    expect(unit.get('Restart')).toBe('always');
    // The data dir (worker id, SQLite or a local blob directory) is the one place it may write.
    expect(unit.get('ReadWritePaths')).toBe(environmentFile().MARQUEE_DATA_DIR);
    // The proxy socket's directory, as the commented setting and docs/operations.md name it.
    expect(unit.get('RuntimeDirectory')).toBe('marquee');
    expect(unit.get('RuntimeDirectoryMode')).toBe('0750');
    const socketLine = /^# (MARQUEE_PROXY_SOCKET)=(\S+)$/m.exec(
      fs.readFileSync(path.join(here, 'marquee-server.env'), 'utf8'),
    );
    expect(socketLine).not.toBeNull();
    expect(path.dirname(socketLine![2]!)).toBe('/run/marquee');
    expect(loadConfig({ ...environmentFile(), [socketLine![1]!]: socketLine![2]! }).proxySocket).toBe(socketLine![2]);
  });
});
