// SHA-256 of whole files on worker threads. Hashing was the largest share of the mirror's main
// thread (about 0.9 s of CPU per 500 MB under load): on workers it runs beside the downloads, on
// another core, and the main thread stays on the sockets. Workers start when a file is to be
// hashed and end after a few idle seconds, so an agent that is only playing holds none.
import { Worker } from 'node:worker_threads';

/** The worker: reads the file in 1 MiB blocks and answers its hex digest, or the error. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
const fs = require('node:fs');
const block = Buffer.allocUnsafe(1024 * 1024);
parentPort.on('message', (file) => {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    const hash = crypto.createHash('sha256');
    for (let n; (n = fs.readSync(fd, block, 0, block.length, null)) > 0; ) hash.update(block.subarray(0, n));
    parentPort.postMessage({ digest: hash.digest('hex') });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message), code: error && error.code });
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
});
`;

/** Idle workers end after this long. */
const IDLE_MS = 5_000;

export class FileHasher {
  private readonly idle: Worker[] = [];
  private readonly waiting: ((worker: Worker) => void)[] = [];
  private running = 0;
  private reaper: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly maxWorkers: number) {}

  /** The file's SHA-256 (hex), read whole on a worker thread. */
  async sha256(file: string): Promise<string> {
    const worker = await this.acquire();
    let healthy = true;
    try {
      return await new Promise<string>((resolve, reject) => {
        const onError = (error: Error) => {
          healthy = false;
          worker.off('message', onMessage);
          reject(error);
        };
        const onMessage = (answer: { digest?: string; error?: string; code?: string }) => {
          worker.off('error', onError);
          if (answer.digest) resolve(answer.digest);
          else reject(Object.assign(new Error(answer.error ?? 'hashing failed'), { code: answer.code }));
        };
        worker.once('message', onMessage);
        worker.once('error', onError);
        worker.postMessage(file);
      });
    } finally {
      if (healthy) this.release(worker);
      else this.replace(worker);
    }
  }

  /** Workers alive now (busy or idle). */
  get workers(): number {
    return this.running;
  }

  /** Ends every worker (the agent stops). */
  async close(): Promise<void> {
    clearTimeout(this.reaper);
    await Promise.all(this.idle.splice(0).map((w) => w.terminate()));
    this.running = 0;
  }

  private acquire(): Promise<Worker> {
    clearTimeout(this.reaper);
    const worker = this.idle.pop();
    if (worker) return Promise.resolve(worker);
    if (this.running < this.maxWorkers) return Promise.resolve(this.spawn());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private spawn(): Worker {
    this.running++;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref();
    return worker;
  }

  /** A worker that failed goes; one waiting for a worker gets a new one. */
  private replace(worker: Worker): void {
    this.running--;
    void worker.terminate();
    const next = this.waiting.shift();
    if (next) next(this.spawn());
  }

  private release(worker: Worker): void {
    const next = this.waiting.shift();
    if (next) return next(worker);
    this.idle.push(worker);
    clearTimeout(this.reaper);
    this.reaper = setTimeout(() => {
      const ending = this.idle.splice(0);
      this.running -= ending.length;
      for (const w of ending) void w.terminate();
    }, IDLE_MS);
    this.reaper.unref();
  }
}
