// The CLI's one file of state: which server to talk to, the installation's anonymous client id, and
// per server the project credential enrollment returned. The credential lives only here: the file
// is created owner-only (0600, in a 0700 directory) and replaced atomically, so a crash never
// leaves half a file and no other user can read the token.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { configProblem, usage } from './exit-codes';

/** Environment overrides (the flags --config and --api-url win over them). */
export const CONFIG_ENV = 'MARQUEE_CONFIG';
export const API_URL_ENV = 'MARQUEE_API_URL';
/** Where `npm start` serves the control plane. */
export const DEFAULT_API_URL = 'http://localhost:8080';
/** Owner read/write only: the file holds bearer tokens. */
const FILE_MODE = 0o600;
const DIRECTORY_MODE = 0o700;

export interface PendingEnrollment {
  idempotency_key: string;
  request: Record<string, unknown>;
  started_at: string;
}

export interface ServerEntry {
  token?: string;
  project_id?: string;
  project_name?: string;
  contact_email?: string;
  enrolled_at?: string;
  /** An enrollment sent but not yet answered: a rerun repeats it with the same key (the token is redelivered). */
  pending_enrollment?: PendingEnrollment;
  /** Where `events follow --resume` continues. */
  events_cursor?: string;
  [member: string]: unknown;
}

export interface ConfigDocument {
  version: 1;
  /** `cli_` + 43 base64url characters: the anonymous installation id enrollment asks for. */
  client_id?: string;
  /** The server used when neither --api-url nor MARQUEE_API_URL names one. */
  api_url?: string;
  /** Keyed by normalized API URL, so a token is only ever sent to the server that issued it. */
  servers: Record<string, ServerEntry>;
  [member: string]: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const optionalString = (value: unknown) => value === undefined || typeof value === 'string';

/** Where the document differs from what the CLI writes, or undefined. (No schema library: it loads on every run.) */
function configShapeProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'the document';
  if (value.version !== 1) return 'version';
  if (!optionalString(value.client_id)) return 'client_id';
  if (!optionalString(value.api_url)) return 'api_url';
  if (!isObject(value.servers)) return 'servers';
  for (const [url, entry] of Object.entries(value.servers)) {
    if (!isObject(entry)) return `servers.${url}`;
    for (const field of ['token', 'project_id', 'project_name', 'contact_email', 'enrolled_at', 'events_cursor'])
      if (!optionalString(entry[field])) return `servers.${url}.${field}`;
    const pending = entry.pending_enrollment;
    if (
      pending !== undefined &&
      !(isObject(pending) && typeof pending.idempotency_key === 'string' && isObject(pending.request))
    )
      return `servers.${url}.pending_enrollment`;
  }
  return undefined;
}

/** --config, else MARQUEE_CONFIG, else the platform's per-user config directory. */
export function configPathFrom(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const given = flag ?? env[CONFIG_ENV];
  if (given) return path.resolve(given);
  if (process.platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'marquee', 'config.json');
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  return path.join(base ?? path.join(os.homedir(), '.config'), 'marquee', 'config.json');
}

/**
 * An API URL as the key of its credential: http(s), no user info, query or fragment, no trailing
 * slash. Anything else is refused before a request (or a token) goes anywhere.
 */
export function normalizeApiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`--api-url ${JSON.stringify(value)} is not a URL (try http://localhost:8080)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw usage(`--api-url must be http:// or https://, not ${url.protocol}`);
  if (url.username || url.password || url.search || url.hash)
    throw usage('--api-url must not carry credentials, a query or a fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export function emptyConfig(): ConfigDocument {
  return { version: 1, servers: {} };
}

export class ConfigFile {
  constructor(readonly path: string) {}

  /** The document, or an empty one when the file does not exist yet. */
  async read(): Promise<ConfigDocument> {
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyConfig();
      throw configProblem('config_unreadable', `cannot read ${this.path}: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw configProblem('config_invalid', `${this.path} is not valid JSON; fix it or move it away`);
    }
    const where = configShapeProblem(parsed);
    if (where !== undefined)
      throw configProblem(
        'config_invalid',
        `${this.path}: ${where} is not what the CLI wrote there; fix it or move it away`,
      );
    return parsed as ConfigDocument;
  }

  /**
   * Reads the file afresh, applies `change`, and replaces the file atomically: written to a
   * temporary file created 0600 beside it, flushed, then renamed over it.
   */
  async update(change: (config: ConfigDocument) => void): Promise<ConfigDocument> {
    const config = await this.read();
    change(config);
    const directory = path.dirname(this.path);
    try {
      await fs.mkdir(directory, { recursive: true, mode: DIRECTORY_MODE });
      const temporary = path.join(
        directory,
        `.${path.basename(this.path)}.${crypto.randomBytes(6).toString('hex')}.tmp`,
      );
      const handle = await fs.open(temporary, 'wx', FILE_MODE);
      try {
        await handle.writeFile(`${JSON.stringify(config, null, 2)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.rename(temporary, this.path);
      // A file created by hand with a looser mode is tightened on the first write.
      await fs.chmod(this.path, FILE_MODE);
    } catch (error) {
      throw configProblem('config_unwritable', `cannot write ${this.path}: ${(error as Error).message}`);
    }
    return config;
  }

  /** Why the file's permissions are unsafe for a credential, or undefined (also when it does not exist). */
  async permissionProblem(): Promise<string | undefined> {
    if (process.platform === 'win32') return undefined;
    try {
      const info = await fs.stat(this.path);
      if ((info.mode & 0o077) !== 0)
        return `${this.path} is readable by other users (mode ${(info.mode & 0o777).toString(8)}); run: chmod 600 ${this.path}`;
      if (typeof process.getuid === 'function' && info.uid !== process.getuid())
        return `${this.path} belongs to another user`;
    } catch {
      return undefined;
    }
    return undefined;
  }
}

/** A fresh anonymous installation id: `cli_` + 32 random bytes as 43 base64url characters. */
export function newClientId(): string {
  return `cli_${crypto.randomBytes(32).toString('base64url')}`;
}
