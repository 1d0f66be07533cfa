// Baseline: Node's own HTTP server answering byte ranges of one file with what Marquee's byte
// routes send (a positional read into a reused buffer, the same response headers, one res.end),
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
/** Buffers back from the socket, as Marquee pools its chunks: one in use per response being sent. */
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
  // Ranges above a megabyte are not what this floor is for.
  const chunk = length <= CHUNK_BYTES ? (idle.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES)) : undefined;
  const body = chunk ? chunk.subarray(0, length) : Buffer.allocUnsafe(length);
  fs.readSync(fd, body, 0, length, start);
  res.statusCode = range ? 206 : 200;
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Length', length);
  if (range) res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
  res.end(body, () => chunk && idle.push(chunk));
});
const port = Number(process.env.PORT);
server.listen(port, '127.0.0.1', () => console.log(`bare node listening on ${port}`));
process.on('SIGTERM', () => process.exit(0));
