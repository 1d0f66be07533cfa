// What mediabunny reads from an MP4, WebM or MP3 container (format, duration, primary tracks), on a
// worker thread. Its demuxers trust the container's tables: an MP4 whose sample-to-chunk table
// claims four billion samples per chunk keeps one loop busy for minutes, and on the main thread
// that stops every request of the server; a sample table of a few hundred million entries fills
// the heap. A worker has its own heap limit, is ended at a deadline and when the verification is
// aborted, and reads the object through the parent, so every BlobStore works as before.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Longest a container may take to read: an hour of MP3 without a Xing header takes a few seconds. */
export const CONTAINER_ANALYSIS_DEADLINE_MS = 60_000;
/** Heap of one analysis: the frame index of a 1 GiB MP3 at 128 kbit/s (2.6 million frames) fits. */
const WORKER_HEAP_MB = 512;
/** An idle worker is kept this long for the next analysis (starting one costs about 70 ms). */
const WORKER_IDLE_MS = 10_000;

export interface TrackFacts {
  /** mediabunny's codec name (`avc`, `vp8`, `mp3`, …), or null when unknown. */
  codec: string | null;
  /** The RFC 6381 codec parameter string, or null when it cannot be established. */
  parameters: string | null;
  width: number | null;
  height: number | null;
}

export interface ContainerFacts {
  /** mediabunny's format name (`MP4`, `WebM`, `MP3`, …); null when no format reads the bytes. */
  format: string | null;
  /** Zero when no duration can be read. */
  seconds: number;
  video: TrackFacts | null;
  audio: TrackFacts | null;
}

/** Why a container was not read: the caller turns it into the verification's problem. */
export class ContainerUnreadable extends Error {}

export interface AnalysisOptions {
  signal: AbortSignal;
  deadlineMs?: number;
}

/** Reads bytes `start` to `end` (exclusive) of the object. */
export type RangeReader = (start: number, end: number) => Promise<Uint8Array>;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { ALL_FORMATS, CustomSource, Input } = require(workerData.mediabunny);
const reads = new Map();
let nextRead = 0;
function read(job, start, end) {
  return new Promise((resolve, reject) => {
    const id = nextRead++;
    reads.set(id, { resolve, reject });
    parentPort.postMessage({ op: 'read', job, id, start, end });
  });
}
async function track(t) {
  if (!t) return null;
  return {
    codec: t.codec ?? null,
    parameters: await t.getCodecParameterString().catch(() => null),
    width: t.type === 'video' ? t.displayWidth : null,
    height: t.type === 'video' ? t.displayHeight : null,
  };
}
async function analyse(job, size) {
  const input = new Input({
    formats: ALL_FORMATS,
    // Reads ahead in growing blocks: without it a scan (an MP3 with no Xing header is timed frame by
    // frame) reads once per frame, each a GET on a bucket.
    source: new CustomSource({ getSize: () => size, read: (start, end) => read(job, start, end), prefetchProfile: 'network' }),
  });
  try {
    const format = await input.getFormat().catch(() => undefined);
    if (!format) return { format: null, seconds: 0, video: null, audio: null };
    const seconds = await input.computeDuration().catch(() => 0);
    return {
      format: format.name,
      seconds,
      video: await track(await input.getPrimaryVideoTrack()),
      audio: await track(await input.getPrimaryAudioTrack()),
    };
  } finally {
    input.dispose();
  }
}
parentPort.on('message', (m) => {
  if (m.op === 'bytes') {
    const pending = reads.get(m.id);
    reads.delete(m.id);
    if (m.error !== undefined) pending.reject(new Error(m.error));
    else pending.resolve(m.bytes);
    return;
  }
  analyse(m.job, m.size).then(
    (facts) => parentPort.postMessage({ op: 'done', job: m.job, facts }),
    (error) => parentPort.postMessage({ op: 'failed', job: m.job, error: String(error && error.message) }),
  );
});
`;

type WorkerMessage =
  | { op: 'read'; job: number; id: number; start: number; end: number }
  | { op: 'done'; job: number; facts: ContainerFacts }
  | { op: 'failed'; job: number; error: string };

const idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];
let mediabunnyPath: string | undefined;
let nextJob = 0;

function takeWorker(): Worker {
  const kept = idle.pop();
  if (kept) {
    clearTimeout(kept.timer);
    return kept.worker;
  }
  mediabunnyPath ??= createRequire(import.meta.url).resolve('mediabunny');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { mediabunny: mediabunnyPath },
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  worker.unref();
  // An analysis listens for its own errors; between analyses nothing may crash the server.
  worker.on('error', () => undefined);
  worker.on('exit', () => forget(worker));
  return worker;
}

function forget(worker: Worker): void {
  const at = idle.findIndex((entry) => entry.worker === worker);
  if (at < 0) return;
  clearTimeout(idle[at]!.timer);
  idle.splice(at, 1);
}

function keepWorker(worker: Worker): void {
  const timer = setTimeout(() => {
    forget(worker);
    void worker.terminate();
  }, WORKER_IDLE_MS).unref();
  idle.push({ worker, timer });
}

/** The container facts of an object of `size` bytes, read on a worker thread within the deadline. */
export function analyseContainer(size: number, read: RangeReader, options: AnalysisOptions): Promise<ContainerFacts> {
  const deadlineMs = options.deadlineMs ?? CONTAINER_ANALYSIS_DEADLINE_MS;
  const { signal } = options;
  if (signal.aborted) return Promise.reject(signal.reason);
  const worker = takeWorker();
  const job = nextJob++;
  return new Promise<ContainerFacts>((resolve, reject) => {
    let ended = false;
    const end = (reuse: boolean) => {
      ended = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (reuse) keepWorker(worker);
      else void worker.terminate();
    };
    const timer = setTimeout(() => {
      end(false);
      reject(new ContainerUnreadable(`the container could not be read within ${deadlineMs / 1000} s`));
    }, deadlineMs);
    const onAbort = () => {
      end(false);
      reject(signal.reason);
    };
    const onError = (error: Error) => {
      end(false);
      reject(
        new ContainerUnreadable(
          (error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? 'the container needs more memory to read than any media we accept'
            : `the container could not be read (${error.message})`,
        ),
      );
    };
    const onExit = () => {
      if (ended) return;
      end(false);
      reject(new ContainerUnreadable('the container could not be read'));
    };
    const onMessage = (m: WorkerMessage) => {
      if (m.job !== job || ended) return;
      if (m.op === 'read') {
        read(m.start, m.end).then(
          (bytes) => {
            if (ended) return;
            // Its own buffer, handed over: a view would be cloned with all of the buffer it views.
            const own = new Uint8Array(bytes);
            worker.postMessage({ op: 'bytes', id: m.id, bytes: own }, [own.buffer]);
          },
          (error: unknown) => ended || worker.postMessage({ op: 'bytes', id: m.id, error: String(error) }),
        );
      } else if (m.op === 'done') {
        end(true);
        resolve(m.facts);
      } else {
        end(true);
        reject(new ContainerUnreadable(`the container could not be read (${m.error})`));
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage({ op: 'analyse', job, size });
  });
}
