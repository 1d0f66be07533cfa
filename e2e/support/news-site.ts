// A stand-in for a third-party site that an iframe placement shows, reachable offline in CI.
// Iframe sources must be https:// and not name localhost or a private address (server rule), so
// the spec uses a `.test` name (reserved, never resolves, so the server accepts it) that this
// Chromium alone maps to a local HTTPS server (--host-resolver-rules). The server's self-signed
// certificate is trusted by pinning its public key (--ignore-certificate-errors-spki-list): only
// this key is accepted, never certificate errors in general.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

export const NEWS_HOST = 'news.marquee-e2e.test';
export const NEWS_URL = `https://${NEWS_HOST}/ticker`;
/** A host that maps nowhere: the iframe placement must fall back gracefully. */
export const UNREACHABLE_URL = 'https://gone.marquee-e2e.test/';

export interface NewsSite {
  /** Extra Chromium flags that map the host and pin the key. */
  chromiumArgs: string[];
  /** Pages a spec sets by path (a hostile page, say); every other path is the ticker. */
  pages: Map<string, string>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Creates the key and certificate now (flags must be known when the browser launches). */
export function newsSite(port: number): NewsSite {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-news-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=${NEWS_HOST}`,
      '-addext',
      `subjectAltName=DNS:${NEWS_HOST}`,
    ],
    { stdio: 'ignore' },
  );
  const publicKey = execFileSync('openssl', ['x509', '-in', cert, '-pubkey', '-noout']);
  const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: publicKey });
  const spki = execFileSync('openssl', ['dgst', '-sha256', '-binary'], { input: der }).toString('base64');
  const pages = new Map<string, string>();
  const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    const page = pages.get(new URL(req.url ?? '/', 'https://x.invalid').pathname);
    if (page !== undefined) return void res.end(page);
    res.end(`<!doctype html><html><body style="margin:0;background:#0f2a44;color:#fff;font:600 48px/120px DejaVu Sans,sans-serif;padding-left:40px">
      <span id="ticker">Breaking: the lobby loop is live</span></body></html>`);
  });
  return {
    chromiumArgs: [
      `--host-resolver-rules=MAP ${NEWS_HOST}:443 127.0.0.1:${port}`,
      `--ignore-certificate-errors-spki-list=${spki}`,
    ],
    pages,
    start: () => new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve())),
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
