// A start whose proxy socket fails after the TCP port was bound (D-389): the port's connections
// must not keep the failed server, and so the process, alive. The socket's listen is held here
// so that a connection can be open on the port when it fails.
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServer } from '../app';
import { loadConfig } from '../config';
import { freePort } from '../testing/harness';
import { tempDirs } from '../testing/temp-dirs';
import * as proxySocket from './proxy-socket';

const held: { fail?: (error: Error) => void } = {};
// Spied, not mocked: the unit project's files share their modules (isolate: false), so a module
// mock would reach every file in this worker.
beforeEach(() => {
  vi.spyOn(proxySocket, 'listenForProxy').mockImplementation(
    () =>
      new Promise((_resolve, reject) => {
        held.fail = reject;
      }),
  );
});
afterEach(() => {
  vi.restoreAllMocks();
});

const tempDir = tempDirs('sock-start');

describe('a start whose proxy socket fails', () => {
  it('closes the connections already open on its port instead of waiting for them', async () => {
    const port = await freePort();
    const dir = tempDir();
    const server = await createServer({
      config: loadConfig({}, [], {
        port,
        bind: '127.0.0.1',
        dataDir: path.join(dir, 'data'),
        proxySocket: path.join(dir, 'proxy.sock'),
      }),
      logDestination: new Writable({ write: (_c, _e, done) => done() }) as never,
    });
    const started = server.listen();
    await vi.waitFor(() => expect(held.fail).toBeDefined(), { timeout: 10_000 });
    // A request whose headers never end: an active connection, which close() alone waits for.
    const client = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    client.write('GET /.health HTTP/1.1\r\nHost: localhost\r\n');
    const clientClosed = new Promise((resolve) => client.once('close', resolve));
    client.on('error', () => {});
    await new Promise((r) => setTimeout(r, 100));
    held.fail!(new Error('MARQUEE_PROXY_SOCKET: refused for the test'));
    const outcome = await Promise.race([
      started.then(
        () => 'started',
        (error: Error) => error.message,
      ),
      new Promise((r) => setTimeout(() => r('still waiting'), 3000)),
    ]);
    expect(outcome).toMatch(/refused for the test/);
    await clientClosed;
  });
});
