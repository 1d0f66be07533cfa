import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { query, reply } from './http/route';
import { freePort, TestServer } from './testing/harness';
import { tempDirs } from './testing/temp-dirs';

describe('process lifecycle', () => {
  it('keeps data across a restart', async () => {
    const first = await TestServer.start();
    const { token } = await first.enroll({ project_name: 'Survivor' });
    const second = await first.restart();
    try {
      const res = await second.request('GET', '/api/v1/project', { token });
      expect(res.status).toBe(200);
      expect(res.json().name).toBe('Survivor');
    } finally {
      await second.stop();
    }
  });

  it('drains: in-flight requests finish, new ones get server_draining', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const server = await TestServer.start({
      extraRoutes: [
        {
          plane: 'control',
          method: 'GET',
          path: '/test/hold',
          route: query({}, async () => (await gate, reply.ok({ finished: true }))),
        },
      ],
    });
    const inFlight = server.request('GET', '/test/hold');
    await new Promise((r) => setTimeout(r, 50));
    const stopping = server.stop();
    await new Promise((r) => setTimeout(r, 20));
    expect(server.services.lifecycle.state).toBe('draining');
    release();
    expect((await inFlight).json()).toEqual({ finished: true });
    await stopping;
  });

  it('answers server_draining with Retry-After 1 while draining', async () => {
    const server = await TestServer.start();
    server.services.lifecycle.state = 'draining';
    const res = await server.request('GET', '/api/v1/capabilities');
    expect(res.status).toBe(421);
    expect(res.json().code).toBe('server_draining');
    expect(res.headers['retry-after']).toBe('1');
    expect((await server.request('GET', '/.ready')).json().code).toBe('server_draining');
    server.services.lifecycle.state = 'ready';
    await server.stop();
  });
});

const tempDir = tempDirs('main');

describe('npm start entry point', () => {
  it('creates the data dir on first run, reuses it on the second, and exits cleanly on SIGTERM', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const port = await freePort();
    const run = async (work: (origin: string) => Promise<void>) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
        env: { ...process.env, PORT: String(port), MARQUEE_DATA_DIR: dataDir, MARQUEE_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start: ${out}`)), 15_000);
        child.stdout.on('data', () => out.includes('Marquee is running') && (clearTimeout(timer), resolve()));
      });
      expect(out).toContain(`http://localhost:${port}`);
      await work(`http://127.0.0.1:${port}`);
      const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    };
    let token = '';
    await run(async (origin) => {
      const res = await fetch(`${origin}/api/v1/enrollments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'main-test-key-1' },
        body: JSON.stringify({ client_id: `cli_${'a'.repeat(43)}`, email: 'main@example.com' }),
      });
      expect(res.status).toBe(201);
      token = ((await res.json()) as { token: string }).token;
    });
    expect(fs.existsSync(path.join(dataDir, 'marquee.db'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'blobs'))).toBe(true);
    await run(async (origin) => {
      const res = await fetch(`${origin}/api/v1/project`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
    });
  }, 40_000);

  it('--help prints every flag and exits 0 without starting or creating its data dir', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--port', '1', '--help'], {
      env: { ...process.env, MARQUEE_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(out).toContain('--database-url <value>  (MARQUEE_DATABASE_URL;');
    expect(out).not.toContain('Marquee is running');
    expect(fs.existsSync(dataDir)).toBe(false);
  }, 30_000);

  it('says why it could not start and exits 1', async () => {
    const root = tempDir();
    const notASocket = path.join(root, 'proxy.sock');
    fs.writeFileSync(notASocket, 'a file');
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      env: {
        ...process.env,
        PORT: String(await freePort()),
        MARQUEE_DATA_DIR: path.join(root, 'data'),
        MARQUEE_LOG_LEVEL: 'warn',
        MARQUEE_PROXY_SOCKET: notASocket,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err).toContain(`marquee: could not start: MARQUEE_PROXY_SOCKET: ${notASocket} exists and is not a socket`);
    // A refused setting is not a defect: no stack.
    expect(err).not.toMatch(/\n\s+at /);
  }, 30_000);
});
