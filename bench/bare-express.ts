// Baseline: a bare Express route answering a small JSON document, nothing else.
import express from 'express';

const app = express();
const body = { status: 'alive' };
app.get('/bare', (_req, res) => {
  res.json(body);
});
const port = Number(process.env.PORT);
app.listen(port, '127.0.0.1', () => console.log(`bare express listening on ${port}`));
process.on('SIGTERM', () => process.exit(0));
