// The device side of the agent: its key, its host facts, its platform adapter.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { calculateJwkThumbprint, compactVerify, importJWK } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { linuxHostFacts } from './host-facts';
import { DeviceIdentity, IDENTITY_FILE } from './identity';
import { FakePlatform, firstOutput, linuxPlatform, splitCommand } from './platform';

const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-device-'));

describe('the device identity', () => {
  it('is made once, owner-only, and the same key on every later start', async () => {
    const dir = path.join(temp(), 'identity');
    const first = await DeviceIdentity.load(dir);
    expect(fs.statSync(path.join(dir, IDENTITY_FILE)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(first.kid).toBe(await calculateJwkThumbprint(first.publicKey, 'sha256'));
    const again = await DeviceIdentity.load(dir);
    expect(again.kid).toBe(first.kid);
    expect(again.publicKey).toEqual(first.publicKey);
    // Loosened permissions are tightened again.
    fs.chmodSync(path.join(dir, IDENTITY_FILE), 0o644);
    await DeviceIdentity.load(dir);
    expect(fs.statSync(path.join(dir, IDENTITY_FILE)).mode & 0o777).toBe(0o600);
  });

  it('makes the key again when a power cut during the first start left its file empty', async () => {
    const dir = path.join(temp(), 'identity');
    fs.mkdirSync(dir, { mode: 0o700 });
    // What ext4 leaves of a file written and named seconds before the power went (never flushed).
    fs.writeFileSync(path.join(dir, IDENTITY_FILE), '', { mode: 0o600 });
    const identity = await DeviceIdentity.load(dir);
    expect(identity.created).toBe(true);
    expect((await DeviceIdentity.load(dir)).kid).toBe(identity.kid);
    expect((await DeviceIdentity.load(dir)).created).toBe(false);
    // Anything else that is not a key is refused, never replaced: it may be the screen's only key.
    fs.writeFileSync(path.join(dir, IDENTITY_FILE), '-----BEGIN PRIVATE KEY-----\nMC4C', { mode: 0o600 });
    await expect(DeviceIdentity.load(dir)).rejects.toThrow();
  });

  it('flushes a new key before it gets its name', async () => {
    const calls: string[] = [];
    const fsyncSync = fs.fsyncSync;
    const spy = vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
      calls.push('fsync');
      fsyncSync(fd);
    });
    const linkSync = fs.linkSync;
    const link = vi.spyOn(fs, 'linkSync').mockImplementation((from, to) => {
      calls.push('link');
      linkSync(from, to);
    });
    try {
      await DeviceIdentity.load(path.join(temp(), 'identity'));
    } finally {
      spy.mockRestore();
      link.mockRestore();
    }
    // The key's bytes before its name; the directory's entry after.
    expect(calls).toEqual(['fsync', 'link', 'fsync']);
  });

  it('signs proofs its public key verifies', async () => {
    const identity = await DeviceIdentity.load(path.join(temp(), 'identity'));
    const jws = await identity.sign('session.mint', 'n'.repeat(43), 1_800_000_000_000);
    const { payload, protectedHeader } = await compactVerify(jws, await importJWK(identity.publicKey, 'EdDSA'));
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', kid: identity.kid });
    expect(JSON.parse(new TextDecoder().decode(payload))).toEqual({
      aud: 'marquee-runtime',
      op: 'session.mint',
      nonce: 'n'.repeat(43),
      iat: 1_800_000_000,
    });
  });
});

describe('Linux host facts', () => {
  function root(files: Record<string, string>): string {
    const dir = temp();
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    return dir;
  }

  it('reads a PC from DMI and /etc/machine-id', () => {
    const dir = root({
      'etc/machine-id': '0123456789abcdef0123456789abcdef\n',
      'etc/os-release': 'NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n',
      'sys/class/dmi/id/product_name': 'NUC13ANHi5\n',
      'sys/class/dmi/id/sys_vendor': 'Intel(R) Client Systems\n',
      'sys/class/dmi/id/product_serial': 'G6AN1234ABCD\n',
    });
    expect(linuxHostFacts(dir, 'x64').read()).toEqual({
      platform: 'linux-x64',
      model: 'NUC13ANHi5',
      firmware: 'Debian GNU/Linux 12 (bookworm)',
      manufacturer: 'Intel(R) Client Systems',
      duid: '0123456789abcdef0123456789abcdef',
      serial: 'G6AN1234ABCD',
    });
  });

  it('reads a Raspberry Pi from its device tree, and skips vendor placeholders', () => {
    const dir = root({
      'etc/machine-id': 'fedcba9876543210fedcba9876543210\n',
      'proc/device-tree/model': 'Raspberry Pi 4 Model B Rev 1.5\u0000',
      'proc/device-tree/serial-number': '10000000abcdef01\u0000',
      'sys/class/dmi/id/product_serial': 'To Be Filled By O.E.M.\n',
    });
    expect(linuxHostFacts(dir, 'arm64').read()).toEqual({
      platform: 'linux-arm64',
      model: 'Raspberry Pi 4 Model B Rev 1.5',
      manufacturer: 'Raspberry Pi Ltd',
      duid: 'fedcba9876543210fedcba9876543210',
      serial: '10000000abcdef01',
    });
  });

  it('answers the platform alone when the OS says nothing', () => {
    expect(linuxHostFacts(temp(), 'arm').read()).toEqual({ platform: 'linux-arm' });
  });
});

describe('the Linux platform adapter', () => {
  function recorder(outputs: Record<string, string> = {}) {
    const calls: string[] = [];
    const run = async (file: string, args: string[]) => {
      calls.push([file, ...args].join(' '));
      return Buffer.from(outputs[file] ?? '');
    };
    return { calls, run };
  }
  const facts = { read: () => ({ platform: 'linux-x64' }) };

  it('drives X11 with xset and xrandr', async () => {
    const { calls, run } = recorder({
      xrandr: 'Screen 0: minimum 8 x 8\nHDMI-1 connected primary 1920x1080+0+0\nDP-1 disconnected\n',
    });
    const platform = linuxPlatform(facts, { env: { DISPLAY: ':0' }, run });
    await platform.setDisplayPower(false);
    await platform.setRotation(90);
    await platform.capture();
    await platform.reboot();
    expect(calls).toEqual([
      'xset dpms force off',
      'xrandr --query',
      'xrandr --output HDMI-1 --rotate left',
      'import -window root png:-',
      'systemctl reboot',
    ]);
  });

  it('drives wlroots Wayland with wlr-randr and grim', async () => {
    const { calls, run } = recorder({ 'wlr-randr': 'HDMI-A-1 "Samsung Electric Company SAMSUNG"\n  Enabled: yes\n' });
    const platform = linuxPlatform(facts, { env: { WAYLAND_DISPLAY: 'wayland-0', DISPLAY: ':0' }, run });
    await platform.setDisplayPower(true);
    await platform.setRotation(180);
    await platform.capture();
    expect(calls).toEqual([
      'wlr-randr',
      'wlr-randr --output HDMI-A-1 --on',
      'wlr-randr',
      'wlr-randr --output HDMI-A-1 --transform 180',
      'grim -t png -',
    ]);
  });

  it('uses the Raspberry Pi firmware tool without a display session', async () => {
    const { calls, run } = recorder();
    const platform = linuxPlatform(facts, { env: {}, run });
    await platform.setDisplayPower(false);
    expect(calls).toEqual(['vcgencmd display_power 0']);
    await expect(platform.setRotation(90)).rejects.toThrow('display session');
  });

  it('runs the configured display power and reboot commands in place of the defaults', async () => {
    const { calls, run } = recorder();
    const platform = linuxPlatform(facts, {
      env: { DISPLAY: ':0' },
      run,
      commands: {
        displayOn: ['ddcutil', 'setvcp', 'd6', '1'],
        displayOff: ['ddcutil', 'setvcp', 'd6', '5'],
        reboot: ['/usr/bin/sudo', '-n', '/usr/sbin/reboot'],
      },
    });
    await platform.setDisplayPower(false);
    await platform.setDisplayPower(true);
    await platform.reboot();
    expect(calls).toEqual(['ddcutil setvcp d6 5', 'ddcutil setvcp d6 1', '/usr/bin/sudo -n /usr/sbin/reboot']);
    // Only what is configured is replaced.
    const some = recorder();
    await linuxPlatform(facts, {
      env: { DISPLAY: ':0' },
      run: some.run,
      commands: { reboot: ['true'] },
    }).setDisplayPower(false);
    expect(some.calls).toEqual(['xset dpms force off']);
  });

  it('splits a configured command into a program and its arguments, with no shell', () => {
    expect(splitCommand('  xset   dpms force off ')).toEqual(['xset', 'dpms', 'force', 'off']);
    expect(splitCommand('reboot; rm -rf /')).toEqual(['reboot;', 'rm', '-rf', '/']);
    expect(splitCommand('   ')).toBeUndefined();
    expect(splitCommand(undefined)).toBeUndefined();
  });

  it('finds no output when none is connected', () => {
    expect(() => firstOutput('DP-1 disconnected\n', 'x11')).toThrow('no connected display output');
  });

  it('has a fake that records what fleet control asked', async () => {
    const fake = new FakePlatform(facts);
    await fake.setDisplayPower(false);
    await fake.setRotation(270);
    await fake.reboot();
    expect(fake.calls).toEqual(['display off', 'rotate 270', 'reboot']);
  });
});
