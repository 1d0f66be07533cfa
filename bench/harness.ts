// Shared benchmark plumbing: child-process servers and an HTTP load generator in this process.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

export interface Load {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

/** Runs a fixed-duration load against one URL. */
export async function load(
  url: string,
  options: { headers?: Record<string, string>; connections?: number; seconds?: number } = {},
): Promise<Load> {
  const result = await autocannon({
    url,
    headers: options.headers,
    connections: options.connections ?? 32,
    duration: options.seconds ?? 5,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
  };
}

export interface Child {
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface ChildOptions {
  /** Raises the child's open-file limit to this through the shell (never above the hard limit). */
  fdLimit?: number;
  /** The server entry (startMarquee; default server/main.ts, what `npm start` runs). */
  script?: string;
}

/** Starts a Node program (TypeScript through tsx) and waits for `ready` on its stdout. */
export async function startChild(
  script: string,
  env: Record<string, string>,
  ready: string,
  options: ChildOptions = {},
): Promise<Child> {
  // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the servers (not allowed in NODE_OPTIONS).
  const extra = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const node = [process.execPath, ...extra, '--import', 'tsx', script];
  const [command, ...args] = options.fdLimit
    ? ['/bin/sh', '-c', `ulimit -n ${options.fdLimit} && exec "$0" "$@"`, ...node]
    : node;
  const child = spawn(command!, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${out}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)));
  });
  return {
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A Marquee server in its own process with a fresh data dir. */
export async function startMarquee(
  port: number,
  env: Record<string, string> = {},
  options: ChildOptions = {},
): Promise<Child & { origin: string; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-bench-'));
  const child = await startChild(
    options.script ?? 'server/main.ts',
    {
      PORT: String(port),
      MARQUEE_DATA_DIR: dataDir,
      MARQUEE_LOG_LEVEL: 'silent',
      MARQUEE_ENROLLMENTS_PER_IP_PER_HOUR: '100000',
      // One loopback client stands for thousands of screens (the events bench opens 5,000 streams).
      MARQUEE_MAX_CONNECTIONS_PER_IP: '0',
      ...env,
    },
    'Marquee is running',
    options,
  );
  return {
    ...child,
    origin: `http://127.0.0.1:${port}`,
    dataDir,
    async stop() {
      await child.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function ratio(value: number, baseline: number): string {
  return `${(value / baseline).toFixed(2)}x`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function table(rows: Record<string, string | number>[]): void {
  console.table(rows);
}
