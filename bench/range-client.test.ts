// The media bench's client against a scripted server: what it counts decides every figure the
// bench prints, so it must count whole 206 answers of the range asked and nothing else.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type LoadTally, rangeClient } from './range-client';

const RANGE = 1000;
const servers: net.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/**
 * A server that answers the n-th request on a connection (from 0) with `answer(n)`; with `split`,
 * in three writes: the header's first 10 bytes, then up to the middle of its blank line, then the
 * rest (the header's end straddles two of the client's reads).
 */
async function scripted(answer: (n: number) => { head: string; body: number; close?: boolean }, split = false) {
  const server = net.createServer((socket) => {
    let n = 0;
    let pending = '';
    socket.on('data', async (data) => {
      pending += data.toString('latin1');
      while (pending.includes('\r\n\r\n')) {
        pending = pending.slice(pending.indexOf('\r\n\r\n') + 4);
        const { head, body, close } = answer(n++);
        const bytes = Buffer.concat([Buffer.from(head, 'latin1'), Buffer.alloc(body, 7)]);
        const cuts = split ? [0, 10, head.length - 2, bytes.length] : [0, bytes.length];
        for (let i = 1; i < cuts.length; i++) {
          socket.write(bytes.subarray(cuts[i - 1], cuts[i]));
          await new Promise((r) => setTimeout(r, 1));
        }
        if (close) socket.end();
      }
    });
    socket.on('error', () => {});
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/object`;
}

const partial = (length: number, extra = '') =>
  `HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-${length - 1}/50000\r\n${extra}Content-Length: ${length}\r\n\r\n`;

async function load(url: string, millis = 150): Promise<LoadTally> {
  const tally: LoadTally = { latencies: [], bytes: 0, non2xx: 0 };
  await rangeClient({
    target: new URL(url),
    headers: {},
    size: 50_000,
    rangeBytes: RANGE,
    deadline: performance.now() + millis,
    tally,
  });
  return tally;
}

describe('the media bench client', () => {
  it('counts every byte of each whole 206, with its header split across reads', async () => {
    const tally = await load(await scripted(() => ({ head: partial(RANGE), body: RANGE }), true));
    expect(tally.latencies.length).toBeGreaterThan(2);
    expect(tally.bytes).toBe(tally.latencies.length * RANGE);
    expect(tally.non2xx).toBe(0);
  });

  it('counts neither the bytes nor the time of an answer that is not a 206 of the range asked', async () => {
    const url = await scripted((n) =>
      n % 3 === 0
        ? { head: partial(RANGE), body: RANGE }
        : n % 3 === 1
          ? { head: 'HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n', body: 5000 }
          : { head: partial(RANGE / 2), body: RANGE / 2 },
    );
    const tally = await load(url);
    expect(tally.latencies.length).toBeGreaterThan(2);
    expect(tally.bytes).toBe(tally.latencies.length * RANGE);
    expect(tally.non2xx).toBeGreaterThanOrEqual(2 * tally.latencies.length - 2);
  });

  it('opens a new connection after Connection: close, and fails when a server closes mid-answer', async () => {
    const closing = await scripted((n) => ({
      head: partial(RANGE, n === 1 ? 'Connection: close\r\n' : ''),
      body: RANGE,
      close: n === 1,
    }));
    const tally = await load(closing);
    expect(tally.latencies.length).toBeGreaterThan(4);
    expect(tally.bytes).toBe(tally.latencies.length * RANGE);

    const cut = await scripted(() => ({ head: partial(RANGE), body: RANGE / 2, close: true }));
    await expect(load(cut)).rejects.toThrow(/closed the connection mid-answer/);
  });
});
