// Baseline: Node's own HTTP server answering byte ranges of one file with what Marquee's byte
// routes send (positional reads into reused megabyte buffers, the same response headers),
// and nothing else: no credential, grant, budget or ledger. The floor under Marquee's figures.
// Under OFFLOAD_PREFIX it answers instead as Marquee's offload does (D-334): the same headers, an
// empty body and X-Accel-Redirect naming the file under that internal nginx location; the floor
// under the offload's figures, since nginx then still asks this server once per range.
import fs from 'node:fs';
import http from 'node:http';

const file = process.env.FILE!;
const size = fs.statSync(file).size;
const fd = fs.openSync(file, 'r');
const CHUNK_BYTES = 1024 * 1024;
/** Buffers back from the socket, as Marquee pools its chunks. */
const idle: Buffer[] = [];
const RANGE = /^bytes=(\d+)-(\d+)$/;
const offloadPrefix = process.env.OFFLOAD_PREFIX;

function setHeaders(res: http.ServerResponse): void {
  res.setHeader('X-Request-Id', 'req_0000000000000000000000');
  res.setHeader('ETag', '"0000000000000000000000000000000000000000000000000000000000000000"');
  res.setHeader('Cache-Control', 'private, max-age=31536000, immutable');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Vary', 'Cookie');
  res.setHeader('Content-Type', 'video/mp4');
  res.setHeader('Content-Disposition', 'inline; filename="object.mp4"');
}

const server = http.createServer((req, res) => {
  setHeaders(res);
  if (offloadPrefix !== undefined && req.url?.startsWith('/offload/')) {
    res.statusCode = 200;
    res.setHeader('Content-Length', '0');
    res.setHeader('X-Accel-Redirect', `${offloadPrefix}object.mp4`);
    res.end();
    return;
  }
  const range = RANGE.exec(req.headers.range ?? '');
  const start = range ? Number(range[1]) : 0;
  const end = range ? Math.min(Number(range[2]), size - 1) : size - 1;
  const length = end - start + 1;
  res.statusCode = range ? 206 : 200;
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Length', length);
  if (range) res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
  sendChunks(res, start, length);
});

/**
 * The range in reads of at most a megabyte into pooled buffers, as Marquee sends it: one read and
 * one write (headers and body together) up to a megabyte, then a chunk at a time as the socket
 * drains. Reads are synchronous: from the page cache the cheapest a Node server can read.
 */
function sendChunks(res: http.ServerResponse, position: number, left: number): void {
  while (left > 0 && !res.destroyed) {
    const chunk = (idle.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES)).subarray(0, Math.min(CHUNK_BYTES, left));
    fs.readSync(fd, chunk, 0, chunk.length, position);
    position += chunk.length;
    left -= chunk.length;
    const giveBack = () => idle.push(Buffer.from(chunk.buffer, 0, CHUNK_BYTES));
    if (left === 0) return void res.end(chunk, giveBack);
    if (!res.write(chunk, giveBack)) return void res.once('drain', () => sendChunks(res, position, left));
  }
}

const port = Number(process.env.PORT);
server.listen(port, '127.0.0.1', () => console.log(`bare node listening on ${port}`));
process.on('SIGTERM', () => process.exit(0));
