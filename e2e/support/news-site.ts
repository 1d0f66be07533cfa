// A stand-in for a third-party site that an iframe placement shows, reachable offline in CI.
// Iframe sources must be https:// and not name localhost or a private address (server rule), so
// the specs use a `.test` name (reserved, never resolves, so the server accepts it) that this
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
/**
 * Where the key and certificate of this run live. The browser's flags are fixed when the config
 * is read, in the runner and again in each worker; all of them must pin the same key, so the first
 * to read the config makes it and the workers it starts find it here.
 */
const KEYS_ENV = 'MARQUEE_E2E_NEWS_KEYS';

export interface NewsSite {
  /** Pages a spec sets by path (a hostile page, say); every other path is the ticker. */
  pages: Map<string, string>;
  stop(): Promise<void>;
}

function keyDir(): string {
  const existing = process.env[KEYS_ENV];
  if (existing && fs.existsSync(path.join(existing, 'cert.pem'))) return existing;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-news-'));
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
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
      '-days',
      '2',
      '-subj',
      `/CN=${NEWS_HOST}`,
      '-addext',
      `subjectAltName=DNS:${NEWS_HOST}`,
    ],
    { stdio: 'ignore' },
  );
  process.env[KEYS_ENV] = dir;
  return dir;
}

/** The Chromium flags that map the news host to `port` and pin this run's key. */
export function newsSiteChromiumArgs(port: number): string[] {
  const cert = path.join(keyDir(), 'cert.pem');
  const publicKey = execFileSync('openssl', ['x509', '-in', cert, '-pubkey', '-noout']);
  const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: publicKey });
  const spki = execFileSync('openssl', ['dgst', '-sha256', '-binary'], { input: der }).toString('base64');
  return [
    `--host-resolver-rules=MAP ${NEWS_HOST}:443 127.0.0.1:${port}`,
    `--ignore-certificate-errors-spki-list=${spki}`,
  ];
}

/** Serves the news site on 127.0.0.1:`port` with this run's key. */
export async function startNewsSite(port: number): Promise<NewsSite> {
  const dir = keyDir();
  const pages = new Map<string, string>();
  const key = fs.readFileSync(path.join(dir, 'key.pem'));
  const cert = fs.readFileSync(path.join(dir, 'cert.pem'));
  const server = https.createServer({ key, cert }, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    const page = pages.get(new URL(req.url ?? '/', 'https://x.invalid').pathname);
    if (page !== undefined) return void res.end(page);
    res.end(`<!doctype html><html><body style="margin:0;background:#0f2a44;color:#fff;font:600 48px/120px DejaVu Sans,sans-serif;padding-left:40px">
      <span id="ticker">Breaking: the lobby loop is live</span></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  return {
    pages,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
