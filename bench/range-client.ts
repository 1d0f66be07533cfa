// The media bench's load generator (D-390): clients that ask for byte ranges in a closed loop on
// keep-alive connections and read every answer into one reused buffer, so that they take as little
// of the machine as they can from the servers they measure.
import net from 'node:net';

/** What the clients of one measurement got: the time of each counted answer, and its bytes. */
export interface LoadTally {
  latencies: number[];
  bytes: number;
  non2xx: number;
}

/** What one client asks for, until when, and where it counts what it got. */
export interface RangeJob {
  target: URL;
  /** Headers of every request but Range (Host defaults to the target's). */
  headers: Record<string, string>;
  size: number;
  rangeBytes: number;
  deadline: number;
  tally: LoadTally;
}

/**
 * One client asking for ranges in turn until `deadline` on a keep-alive connection (a new one when
 * the server closes it, as nginx does after 1,000 requests), reading every answer into one reused
 * buffer (`onread`): no Buffer per chunk and no HTTP parser object, so that the client takes as
 * little of the machine as it can from the servers it measures. Answers must carry Content-Length
 * (nginx's and Marquee's do).
 */
export async function rangeClient(job: RangeJob): Promise<void> {
  const buffer = Buffer.allocUnsafe(256 * 1024);
  while (performance.now() < job.deadline) await rangeConnection(job, buffer);
}

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * One connection of rangeClient: resolves when it closed, after its last complete answer; rejects
 * when the server closed it mid-answer. Only the header's bytes are decoded; only a 206 of exactly
 * the range asked counts its bytes and time (any other answer counts in non2xx alone).
 */
function rangeConnection(
  { target, headers, size, rangeBytes, deadline, tally }: RangeJob,
  buffer: Buffer,
): Promise<void> {
  const head = `GET ${target.pathname} HTTP/1.1\r\n${Object.entries({ host: target.host, ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}`;
  return new Promise((resolve, reject) => {
    /** The header's bytes so far, when it did not end in the read that began it. */
    let partial: Buffer | null = null;
    let remaining = -1; // body bytes still to come; -1 while reading the header; -2 once done
    let counted = false; // this answer is a 206 of the range asked
    let closing = false; // the answer said Connection: close
    let began = 0;
    const ask = () => {
      const start = Math.floor(Math.random() * (size - rangeBytes));
      began = performance.now();
      partial = null;
      remaining = -1;
      socket.write(`${head}range: bytes=${start}-${start + rangeBytes - 1}\r\n\r\n`);
    };
    const answered = () => {
      if (counted) tally.latencies.push(performance.now() - began);
      if (closing || performance.now() >= deadline) {
        remaining = -2; // nothing more is asked on this connection
        socket.end();
      } else ask();
    };
    /** Reads the header that ends at `end` of `bytes`; false when the connection was given up. */
    const readHeader = (bytes: Buffer, end: number): boolean => {
      const header = bytes.toString('latin1', 0, end);
      const contentLength = /\r\ncontent-length: *([0-9]+)/i.exec(header);
      if (!contentLength) {
        socket.destroy(new Error(`an answer without Content-Length: ${header.slice(0, 200)}`));
        return false;
      }
      remaining = Number(contentLength[1]);
      counted = header.slice(9, 12) === '206' && remaining === rangeBytes;
      if (!counted) tally.non2xx++;
      closing = /\r\nconnection: *close/i.test(header);
      return true;
    };
    const socket = net.connect({
      host: target.hostname,
      port: Number(target.port),
      onread: {
        buffer,
        callback(length: number, chunk: Uint8Array) {
          let offset = 0;
          if (remaining === -1) {
            const read = Buffer.from(chunk.buffer, chunk.byteOffset, length);
            const carried = partial?.length ?? 0;
            const bytes = partial ? Buffer.concat([partial, read]) : read;
            // The end may straddle two reads: look again from just before where this read began.
            const end = bytes.indexOf(HEADER_END, Math.max(0, carried - 3));
            if (end < 0) {
              partial = Buffer.from(bytes); // the read buffer is reused: keep a copy
              return true;
            }
            if (!readHeader(bytes, end)) return false;
            offset = end + 4 - carried;
          } else if (remaining < 0) return true;
          const body = Math.min(length - offset, remaining);
          if (counted) tally.bytes += body;
          remaining -= body;
          if (remaining === 0) answered();
          return true;
        },
      },
    });
    socket.once('connect', ask);
    // A reset after the last complete answer (a server closing its keep-alive side) ends the connection, not the run.
    socket.once('error', (error) => (remaining === -2 ? undefined : reject(error)));
    socket.once('close', () =>
      remaining === -2 ? resolve() : reject(new Error(`${target.href}: the server closed the connection mid-answer`)),
    );
  });
}
