// SHA-256 on worker threads, of whole files (the daily verification) and of downloads as they are
// written (the mirror): hashing is the largest share of the mirror's CPU (about 0.45 s per 500 MB),
// and on a worker it runs beside the downloads, on another core. A download hands each chunk it has
// written to the worker (the chunk's memory moves there and back, no copy), so a landed file is not
// read back from disk to be hashed (D-384). Workers start when there is something to hash and end
// after a few idle seconds, so an agent that is only playing holds none.
import { Worker } from 'node:worker_threads';

/**
 * The worker. `file`: the digest of a whole file. `begin`: a stream, starting with the first
 * `bytes` of `file` (the part a resumed download already holds); `add`: the next bytes, whose
 * buffer is handed back as `ret`; `digest` ends the stream; `drop` forgets it.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
const fs = require('node:fs');
const block = Buffer.allocUnsafe(1024 * 1024);
const streams = new Map();
function hashFile(hash, file, limit) {
  const fd = fs.openSync(file, 'r');
  try {
    let left = limit;
    for (let n; left > 0 && (n = fs.readSync(fd, block, 0, Math.min(block.length, left), null)) > 0; left -= n)
      hash.update(block.subarray(0, n));
    if (left > 0 && limit !== Infinity)
      throw Object.assign(new Error('the file is shorter than the part to hash'), { code: 'ESHORT' });
  } finally {
    fs.closeSync(fd);
  }
}
const failure = (error) => ({ error: String(error && error.message), code: error && error.code });
parentPort.on('message', (m) => {
  if (m.op === 'file') {
    try {
      const hash = crypto.createHash('sha256');
      hashFile(hash, m.file, Infinity);
      parentPort.postMessage({ id: m.id, digest: hash.digest('hex') });
    } catch (error) {
      parentPort.postMessage({ id: m.id, ...failure(error) });
    }
  } else if (m.op === 'begin') {
    const stream = { hash: crypto.createHash('sha256'), failed: undefined };
    streams.set(m.id, stream);
    try {
      if (m.bytes > 0) hashFile(stream.hash, m.file, m.bytes);
    } catch (error) {
      stream.failed = failure(error);
    }
  } else if (m.op === 'add') {
    const stream = streams.get(m.id);
    if (stream && !stream.failed) stream.hash.update(new Uint8Array(m.buffer, 0, m.length));
    parentPort.postMessage({ ret: m.ret, buffer: m.buffer }, [m.buffer]);
  } else if (m.op === 'digest') {
    const stream = streams.get(m.id);
    streams.delete(m.id);
    if (!stream) parentPort.postMessage({ id: m.id, error: 'no such stream' });
    else parentPort.postMessage(stream.failed ? { id: m.id, ...stream.failed } : { id: m.id, digest: stream.hash.digest('hex') });
  } else if (m.op === 'drop') {
    streams.delete(m.id);
  }
});
`;

/** Idle workers end after this long. */
const IDLE_MS = 5_000;

/** A hash of bytes as a download writes them, on a worker; the digest covers its prefix too. */
export interface HashStream {
  /**
   * Adds the first `length` bytes of `chunk`, which must be a whole ArrayBuffer of its own: its
   * memory moves to the worker and comes back, as a new Buffer, to `returned` once hashed.
   */
  give(chunk: Buffer, length: number, returned: (chunk: Buffer) => void): void;
  /** The SHA-256 (hex) of the prefix and of every byte added; the stream ends. */
  digest(): Promise<string>;
  /** Ends the stream unread (its download failed). */
  drop(): void;
}

interface Answer {
  id?: number;
  digest?: string;
  error?: string;
  code?: string;
  ret?: number;
  buffer?: ArrayBuffer;
}

interface Job {
  resolve: (digest: string) => void;
  reject: (error: Error) => void;
}

/** One worker and what it owes: digests by job id, handed-over chunks by return id. */
class HashWorker {
  readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  readonly jobs = new Map<number, Job>();
  /** Chunks handed over and not yet back: who gets them, and their size. */
  readonly returns = new Map<number, { returned: (chunk: Buffer) => void; bytes: number }>();
  /** Streams begun and not yet ended, and whole files asked for. */
  load = 0;
  dead: Error | undefined;

  constructor(onCrash: (w: HashWorker, error: Error) => void) {
    this.worker.unref();
    this.worker.on('message', (answer: Answer) => {
      if (answer.ret !== undefined) {
        const owed = this.returns.get(answer.ret);
        this.returns.delete(answer.ret);
        owed?.returned(Buffer.from(answer.buffer!));
        return;
      }
      const job = this.jobs.get(answer.id!);
      if (!job) return;
      this.jobs.delete(answer.id!);
      if (answer.digest) job.resolve(answer.digest);
      else job.reject(Object.assign(new Error(answer.error ?? 'hashing failed'), { code: answer.code }));
    });
    this.worker.once('error', (error) => onCrash(this, error));
  }
}

export class FileHasher {
  private readonly live: HashWorker[] = [];
  private nextId = 1;
  private reaper: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly maxWorkers: number) {}

  /** The file's SHA-256 (hex), read whole on a worker thread. */
  sha256(file: string): Promise<string> {
    const worker = this.pick();
    const id = this.nextId++;
    return this.answer(worker, id, { op: 'file', id, file });
  }

  /** A hash of what a download writes after the first `prefixBytes` of `file` (already on disk). */
  stream(file: string, prefixBytes: number): HashStream {
    const w = this.pick();
    const id = this.nextId++;
    w.worker.postMessage({ op: 'begin', id, file, bytes: prefixBytes });
    let ended = false;
    return {
      give: (chunk, length, returned) => {
        if (chunk.byteOffset !== 0 || chunk.byteLength !== chunk.buffer.byteLength)
          throw new TypeError('only a chunk that is a whole ArrayBuffer can be handed over');
        // A dead worker hashes nothing more (the digest fails): the chunk goes straight back.
        if (w.dead) return returned(chunk);
        const ret = this.nextId++;
        w.returns.set(ret, { returned, bytes: chunk.byteLength });
        const buffer = chunk.buffer as ArrayBuffer;
        w.worker.postMessage({ op: 'add', id, buffer, length, ret }, [buffer]);
      },
      digest: () => {
        ended = true;
        return this.answer(w, id, { op: 'digest', id });
      },
      drop: () => {
        if (ended) return;
        ended = true;
        w.worker.postMessage({ op: 'drop', id });
        this.settled(w);
      },
    };
  }

  /** Workers alive now (busy or idle). */
  get workers(): number {
    return this.live.length;
  }

  /** Ends every worker (the agent stops). */
  async close(): Promise<void> {
    clearTimeout(this.reaper);
    await Promise.all(this.live.splice(0).map((w) => w.worker.terminate()));
  }

  /** The least busy worker, or a new one while every worker is busy and there may be more. */
  private pick(): HashWorker {
    clearTimeout(this.reaper);
    let best = this.live[0];
    for (const w of this.live) if (w.load < best!.load) best = w;
    if (!best || (best.load > 0 && this.live.length < this.maxWorkers)) {
      best = new HashWorker((w, error) => this.crashed(w, error));
      this.live.push(best);
    }
    best.load++;
    return best;
  }

  private answer(w: HashWorker, id: number, message: object): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (w.dead) {
        this.settled(w);
        return reject(w.dead);
      }
      w.jobs.set(id, {
        resolve: (digest) => {
          this.settled(w);
          resolve(digest);
        },
        reject: (error) => {
          this.settled(w);
          reject(error);
        },
      });
      w.worker.postMessage(message);
    });
  }

  /** A job or stream ended; idle workers go after IDLE_MS. */
  private settled(w: HashWorker): void {
    w.load--;
    if (this.live.some((x) => x.load > 0)) return;
    clearTimeout(this.reaper);
    this.reaper = setTimeout(() => {
      if (this.live.some((x) => x.load > 0)) return;
      for (const x of this.live.splice(0)) void x.worker.terminate();
    }, IDLE_MS);
    this.reaper.unref();
  }

  /**
   * A worker that died fails what it owed, and gives back the chunks it held (as fresh memory:
   * theirs died with it), so a download waiting for them is not held forever. The next job starts
   * another worker.
   */
  private crashed(w: HashWorker, error: Error): void {
    w.dead = error;
    const at = this.live.indexOf(w);
    if (at >= 0) this.live.splice(at, 1);
    for (const job of w.jobs.values()) job.reject(error);
    w.jobs.clear();
    for (const owed of w.returns.values()) owed.returned(Buffer.allocUnsafeSlow(owed.bytes));
    w.returns.clear();
    void w.worker.terminate();
  }
}
