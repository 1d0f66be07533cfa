import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agentOptions, readSettings } from './main';

describe('kiosk settings', () => {
  it('take the documented flags', () => {
    expect(
      readSettings(
        ['--server', 'http://localhost:8080/x', '--data-dir', '/tmp/k', '--port', '19401', '--no-browser'],
        {},
      ),
    ).toEqual({
      server: 'http://localhost:8080',
      dataDir: '/tmp/k',
      port: 19401,
      browser: false,
      chromium: '/usr/bin/chromium',
      budgetBytes: undefined,
      resetIdentity: false,
      commands: { displayOn: undefined, displayOff: undefined, reboot: undefined },
      lan: undefined,
    });
  });

  it('take the LAN carrier of a sync group: a listener, peers, an advertised address, a preferred lead', () => {
    const base = ['--server', 'http://x', '--data-dir', '/tmp/k', '--port', '8090'];
    expect(
      readSettings([...base, '--lan-listen', '0.0.0.0:8091', '--lan-peers', 'ws://10.0.0.5:8091, ws://10.0.0.6:8091'], {
        MARQUEE_KIOSK_LAN_ADVERTISE: 'ws://10.0.0.4:8091',
        MARQUEE_KIOSK_LAN_LEAD: '1',
      }).lan,
    ).toEqual({
      listen: { host: '0.0.0.0', port: 8091 },
      peers: ['ws://10.0.0.5:8091', 'ws://10.0.0.6:8091'],
      advertise: 'ws://10.0.0.4:8091',
      lead: true,
    });
    expect(readSettings([...base, '--lan-peers', 'ws://10.0.0.5:8091'], {}).lan).toEqual({
      peers: ['ws://10.0.0.5:8091'],
      lead: false,
    });
    expect(() => readSettings([...base, '--lan-listen', '8091'], {})).toThrow('host:port');
    expect(() => readSettings([...base, '--lan-listen', '127.0.0.1:8090'], {})).toThrow('port of its own');
    expect(() => readSettings([...base, '--lan-peers', 'http://10.0.0.5:8091'], {})).toThrow('ws://');
    expect(() => readSettings([...base, '--lan-lead'], {})).toThrow('need --lan-listen');
    expect(readSettings([...base, '--lan-listen', '0.0.0.0:8091', '--lan-discover'], {}).lan).toEqual({
      listen: { host: '0.0.0.0', port: 8091 },
      peers: [],
      discovery: {},
      lead: false,
    });
    expect(() => readSettings([...base, '--lan-discover'], {})).toThrow('needs --lan-listen');
  });

  it('take display power and reboot commands, split into a program and its arguments', () => {
    const settings = readSettings(
      ['--server', 'http://x', '--data-dir', '/tmp/k', '--display-off-command', ' wlr-randr  --output HDMI-A-1 --off '],
      {
        MARQUEE_KIOSK_DISPLAY_ON_COMMAND: 'wlr-randr --output HDMI-A-1 --on',
        MARQUEE_KIOSK_DISPLAY_OFF_COMMAND: 'ignored: the flag wins',
        MARQUEE_KIOSK_REBOOT_COMMAND: '/usr/bin/sudo -n /usr/bin/systemctl reboot',
      },
    );
    expect(settings.commands).toEqual({
      displayOn: ['wlr-randr', '--output', 'HDMI-A-1', '--on'],
      displayOff: ['wlr-randr', '--output', 'HDMI-A-1', '--off'],
      reboot: ['/usr/bin/sudo', '-n', '/usr/bin/systemctl', 'reboot'],
    });
  });

  it('fall back to the environment and defaults, a browser included', () => {
    expect(
      readSettings([], {
        MARQUEE_KIOSK_SERVER: 'https://play.example.com',
        MARQUEE_KIOSK_DATA_DIR: '/var/lib/k',
        MARQUEE_KIOSK_BUDGET_MB: '512',
      }),
    ).toMatchObject({ server: 'https://play.example.com', port: 8090, browser: true, budgetBytes: 512 * 1024 * 1024 });
  });

  it('take a budget in MiB as whole bytes, fractions included', () => {
    const settings = readSettings(['--server', 'http://x', '--data-dir', '/tmp/k', '--budget-mb', '0.04'], {});
    expect(settings.budgetBytes).toBe(41_943);
    expect(() => readSettings(['--server', 'http://x', '--data-dir', '/tmp/k', '--budget-mb', '0'], {})).toThrow(
      'budget',
    );
  });

  it('refuse what they cannot use', () => {
    expect(() => readSettings(['--data-dir', '/tmp/k'], {})).toThrow('usage');
    expect(() => readSettings(['--server', 'ftp://x', '--data-dir', '/tmp/k'], {})).toThrow('play origin');
    expect(() => readSettings(['--server', 'http://x', '--data-dir', '/tmp/k', '--port', '70000'], {})).toThrow('port');
    expect(() => readSettings(['--server', 'http://x', '--data-dir', '/tmp/k', '--bogus'], {})).toThrow();
  });
});

describe('both shells', () => {
  it('hand the agent every setting it takes, the LAN carrier and the budget included', () => {
    const settings = readSettings(
      [
        '--server',
        'http://x',
        '--data-dir',
        '/tmp/k',
        '--port',
        '8090',
        '--budget-mb',
        '1',
        '--lan-peers',
        'ws://10.0.0.5:8091',
      ],
      {},
    );
    const log = () => undefined;
    expect(agentOptions(settings, { playerDir: '/p', log })).toEqual({
      server: 'http://x',
      dataDir: '/tmp/k',
      port: 8090,
      budgetBytes: 1024 * 1024,
      lan: { peers: ['ws://10.0.0.5:8091'], lead: false },
      playerDir: '/p',
      log,
    });
  });

  it('start the agent from agentOptions and honour --reset-identity, Electron as well as the Chromium command', () => {
    // Electron's main cannot run in a test; it must not map settings (or skip one) on its own.
    for (const file of ['packaging/kiosk/main.ts', 'packaging/electron/main.ts']) {
      const source = fs.readFileSync(file, 'utf8');
      expect(source, file).toMatch(/KioskAgent\.start\(\s*agentOptions\(settings,/);
      expect(source, file).toMatch(
        /if \(settings\.resetIdentity\) \{\s*(?:\/\/.*\s*)?(?:const reset = )?await resetIdentity\(settings\)/,
      );
    }
  });
});
