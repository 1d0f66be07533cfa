// Baseline: a bare Node SSE fan-out. GET /stream holds a response open; POST /publish writes one
// small frame, stamped with the time the publish arrived, to every open response.
import http from 'node:http';

const streams = new Set<http.ServerResponse>();
let sequence = 0;

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/stream')) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.write('retry: 3000\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
    return;
  }
  if (req.method === 'POST' && req.url === '/publish') {
    const at = new Date().toISOString();
    sequence++;
    const frame = `id: ${sequence}\nevent: bench.published\ndata: ${JSON.stringify({ type: 'bench.published', sequence, at })}\n\n`;
    for (const stream of streams) stream.write(frame);
    res.end();
    return;
  }
  res.statusCode = 404;
  res.end();
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`bare sse listening on ${process.env.PORT}`));
process.on('SIGTERM', () => process.exit(0));
