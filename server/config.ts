// Every setting of the server, declared once: env name, command-line flag, default, validation, doc.
import path from 'node:path';
import { z } from 'zod';
import { parseS3BlobUrl } from './blobs/s3-location';
import { isAddressOrRange } from './http/trusted-proxies';
import { releasesSameSiteAsPlayer } from './release-host/release-site';

interface Setting<T> {
  env: string;
  flag: string;
  doc: string;
  secret?: boolean;
  /** How a value that is partly secret prints (a URL without its password). */
  show?: (value: unknown) => string;
  schema: z.ZodType<T>;
  /** Default, computed from the settings already resolved (origins follow PORT). */
  fallback: (resolved: Readonly<Record<string, unknown>>) => T;
}

const port = z.coerce.number().int().min(0).max(65535);
const origin = z
  .string()
  .url()
  .transform((v) => v.replace(/\/+$/, ''));
const optionalString = z.string().min(1).optional();
/** A URL's password replaced, wherever the URL is printed (valid or not). */
function withoutPassword(value: unknown): string {
  return String(value).replace(/(\/\/[^/:@]*:)[^@/]*@/, '$1[redacted]@');
}
/** A signing secret shorter than this is guessable; 32 random characters carry well over 128 bits. */
export const SECRET_MIN_CHARACTERS = 32;

function setting<T>(s: Setting<T>): Setting<T> {
  return s;
}

export const SETTINGS = {
  port: setting({
    env: 'PORT',
    flag: '--port',
    doc: 'TCP port every plane listens on.',
    schema: port,
    fallback: () => 8080,
  }),
  bind: setting({
    env: 'MARQUEE_BIND',
    flag: '--bind',
    doc: 'Address to listen on. Use 0.0.0.0 to reach the player from screens on the LAN.',
    schema: z.string().min(1),
    fallback: () => '127.0.0.1',
  }),
  dataDir: setting({
    env: 'MARQUEE_DATA_DIR',
    flag: '--data-dir',
    doc: 'Directory holding the SQLite database (unless MARQUEE_DATABASE_URL names another), the blob directory and the generated secret.',
    schema: z.string().min(1),
    fallback: () => './data',
  }),
  databaseUrl: setting({
    env: 'MARQUEE_DATABASE_URL',
    flag: '--database-url',
    doc: 'The database: sqlite:<file> (default: marquee.db in the data dir) or postgres://user:password@host/db (see docs/operations.md, "PostgreSQL and several replicas").',
    schema: z.string().regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be sqlite:<file> or postgres://…'),
    show: withoutPassword,
    fallback: (c) => `sqlite:${path.join(String(c.dataDir), 'marquee.db')}`,
  }),
  blobUrl: setting({
    env: 'MARQUEE_BLOB_URL',
    flag: '--blob-url',
    doc: 'Where media and release files live. Unset: the blobs directory in the data dir. s3://bucket/prefix?endpoint=…&region=…&force_path_style=true for an S3-compatible bucket, with credentials from the standard AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); see docs/operations.md.',
    schema: z
      .string()
      .superRefine((value, ctx) => {
        try {
          parseS3BlobUrl(value);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
        }
      })
      .optional(),
    fallback: () => undefined,
  }),
  controlOrigin: setting({
    env: 'MARQUEE_CONTROL_ORIGIN',
    flag: '--control-origin',
    doc: 'Public origin of the control plane ({base_url}).',
    schema: origin,
    fallback: (c) => `http://localhost:${c.port}`,
  }),
  playOrigin: setting({
    env: 'MARQUEE_PLAY_ORIGIN',
    flag: '--play-origin',
    doc: 'Public origin of the runtime plane and the player ({play_url}).',
    schema: origin,
    fallback: (c) => `http://localhost:${c.port}`,
  }),
  releaseOrigin: setting({
    env: 'MARQUEE_RELEASE_ORIGIN',
    flag: '--release-origin',
    doc: 'Origin template of release hosts ({release_url}); {label} is replaced by the release host label.',
    schema: z
      .string()
      .regex(
        /^https?:\/\/\{label\}\.[A-Za-z0-9.-]+(:\d+)?$/,
        'must look like https://{label}.marquee-apps.example (a registrable domain other than the player’s)',
      ),
    fallback: (c) => `http://{label}.release.localhost:${c.port}`,
  }),
  allowSameSiteReleases: setting({
    env: 'MARQUEE_ALLOW_SAME_SITE_RELEASES',
    flag: '--allow-same-site-releases',
    doc: "Set to 1 to start although release hosts are the same site (registrable domain) as the play origin. Their applications then share the player's main thread: one that hangs freezes the screen. Only for trusted applications.",
    schema: z.union([z.boolean(), z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true')]),
    fallback: () => false,
  }),
  dashboardOrigin: setting({
    env: 'MARQUEE_DASHBOARD_ORIGIN',
    flag: '--dashboard-origin',
    doc: 'Public origin of the dashboard ({dashboard_url}).',
    schema: origin,
    fallback: (c) => `http://dashboard.localhost:${c.port}`,
  }),
  model: setting({
    env: 'MARQUEE_MODEL',
    flag: '--model',
    doc: 'Which generation decides readiness and dependency statuses: P (421/500) or A (503).',
    schema: z.enum(['A', 'P']),
    fallback: () => 'P' as const,
  }),
  secret: setting({
    env: 'MARQUEE_SECRET',
    flag: '--secret',
    doc: `Server signing secret (cookies, capabilities, cursors, upload URLs), at least ${SECRET_MIN_CHARACTERS} characters. Generated into the data dir when unset.`,
    secret: true,
    schema: z
      .string()
      .min(SECRET_MIN_CHARACTERS, `must be at least ${SECRET_MIN_CHARACTERS} characters (use a random value)`)
      .optional(),
    fallback: () => undefined,
  }),
  betaKey: setting({
    env: 'MARQUEE_BETA_KEY',
    flag: '--beta-key',
    doc: 'When set, POST /api/v1/enrollments requires this beta_key.',
    secret: true,
    schema: optionalString,
    fallback: () => undefined,
  }),
  enrollmentsPerIpPerHour: setting({
    env: 'MARQUEE_ENROLLMENTS_PER_IP_PER_HOUR',
    flag: '--enrollments-per-ip-per-hour',
    doc: 'Enrollment and account-creation budget per client IP per hour (raise it when many installations share one NAT).',
    schema: z.coerce.number().int().positive(),
    fallback: () => 30,
  }),
  trustedProxies: setting({
    env: 'MARQUEE_TRUSTED_PROXIES',
    flag: '--trusted-proxies',
    doc: 'Comma-separated addresses or CIDR ranges of your reverse proxies. Requests from them are attributed to the client their X-Forwarded-For names (per-IP rate budgets). Default none: the socket peer is the client.',
    schema: z.preprocess(
      (value) =>
        typeof value === 'string'
          ? value
              .split(',')
              .map((v) => v.trim())
              .filter((v) => v !== '')
          : value,
      z.array(
        z.string().refine(isAddressOrRange, 'each entry must be an IP address or a CIDR range such as 10.0.0.0/8'),
      ),
    ),
    fallback: () => [] as string[],
  }),
  proxySocket: setting({
    env: 'MARQUEE_PROXY_SOCKET',
    flag: '--proxy-socket',
    doc: 'Path of a Unix socket to listen on as well, for a reverse proxy on this machine (nginx `server unix:…` in its upstream; docs/operations.md). Its connections are the trusted proxy: X-Forwarded-For names the client, MARQUEE_ACCEL_REDIRECT applies and the per-address connection cap does not. A stale socket file is replaced; one in use stops the start. Unset: TCP only.',
    schema: z
      .string()
      .refine((p) => path.isAbsolute(p), 'must be an absolute path')
      // sun_path holds 108 bytes with its terminating NUL on Linux (104 on the BSDs).
      .refine((p) => Buffer.byteLength(p) <= 100, 'must be at most 100 bytes long (a Unix socket path limit)')
      .optional(),
    fallback: () => undefined,
  }),
  proxySocketMode: setting({
    env: 'MARQUEE_PROXY_SOCKET_MODE',
    flag: '--proxy-socket-mode',
    doc: "Permissions of MARQUEE_PROXY_SOCKET, in octal: who may connect as the trusted proxy. Default 660 (Marquee's user and group; put nginx's user in that group).",
    schema: z.preprocess(
      (mode) => (typeof mode === 'string' && /^0?[0-7]{3}$/.test(mode) ? Number.parseInt(mode, 8) : mode),
      z.number({ error: 'must be octal permissions such as 660' }).int().min(0).max(0o777),
    ),
    show: (mode) => (typeof mode === 'number' ? mode.toString(8) : String(mode)),
    fallback: () => 0o660,
  }),
  maxConnectionsPerIp: setting({
    env: 'MARQUEE_MAX_CONNECTIONS_PER_IP',
    flag: '--max-connections-per-ip',
    doc: 'Open connections one client address may hold at once; one more is answered 429 rate_limited and closed. Trusted proxies are exempt. 0 turns the cap off (raise it when many screens share one NAT address).',
    schema: z.coerce.number().int().min(0),
    fallback: () => 256,
  }),
  eventRetentionDays: setting({
    env: 'MARQUEE_EVENT_RETENTION_DAYS',
    flag: '--event-retention-days',
    doc: 'Durable events older than this are pruned; cursors before them get stream.resync_required.',
    schema: z.coerce.number().positive(),
    fallback: () => 30,
  }),
  sqliteSync: setting({
    env: 'MARQUEE_SQLITE_SYNC',
    flag: '--sqlite-sync',
    doc: 'SQLite synchronous mode under WAL: NORMAL survives process crashes, FULL also power loss.',
    schema: z.enum(['NORMAL', 'FULL']),
    fallback: () => 'NORMAL' as const,
  }),
  accelRedirect: setting({
    env: 'MARQUEE_ACCEL_REDIRECT',
    flag: '--accel-redirect',
    doc: 'Path prefix of an nginx internal location that serves the blob directory (docs/operations.md). When set, media exports and protected content asked for through a trusted proxy (MARQUEE_TRUSTED_PROXIES) are answered with X-Accel-Redirect and nginx sends the bytes. Unset: Marquee sends them.',
    schema: z
      .string()
      .regex(/^\/([A-Za-z0-9_.-]+\/)+$/, 'must be a path that starts and ends with /, such as /_marquee_blobs/')
      .optional(),
    fallback: () => undefined,
  }),
  logLevel: setting({
    env: 'MARQUEE_LOG_LEVEL',
    flag: '--log-level',
    doc: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    fallback: () => 'info' as const,
  }),
  commit: setting({
    env: 'MARQUEE_COMMIT',
    flag: '--commit',
    doc: 'Source commit reported by GET /.version.',
    schema: z.string().min(1),
    fallback: () => 'development',
  }),
  smtpUrl: setting({
    env: 'MARQUEE_SMTP_URL',
    flag: '--smtp-url',
    doc: 'Outgoing mail server: smtp://user:password@host:587 (STARTTLS when offered) or smtps://…:465. Unset: mail is written to the outbox directory in the data dir and the log names each file.',
    show: withoutPassword,
    schema: z
      .string()
      .regex(
        /^smtps?:\/\/[^/\s]+\/?(\?\S*)?$/,
        'must be smtp://host:port or smtps://host:port (user:password@ optional)',
      )
      .optional(),
    fallback: () => undefined,
  }),
  mailFrom: setting({
    env: 'MARQUEE_MAIL_FROM',
    flag: '--mail-from',
    doc: 'Sender address of the mail Marquee sends (invitations, sign-in resets, address verification).',
    schema: z.string().min(3).max(254),
    fallback: () => 'Marquee <marquee@localhost>',
  }),
  imageVendorUrl: setting({
    env: 'MARQUEE_IMAGE_VENDOR_URL',
    flag: '--image-vendor-url',
    doc: 'Base URL of an OpenAI-compatible images API for media generation. Unset: generation is unavailable.',
    schema: optionalString,
    fallback: () => undefined,
  }),
  imageVendorKey: setting({
    env: 'MARQUEE_IMAGE_VENDOR_KEY',
    flag: '--image-vendor-key',
    doc: 'API key for the image vendor.',
    secret: true,
    schema: optionalString,
    fallback: () => undefined,
  }),
  imageVendorModel: setting({
    env: 'MARQUEE_IMAGE_VENDOR_MODEL',
    flag: '--image-vendor-model',
    doc: 'Model name sent to the image vendor.',
    schema: z.string().min(1),
    fallback: () => 'gpt-image-1',
  }),
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof SETTINGS;
type RawConfig = { [K in keyof Settings]: Settings[K] extends Setting<infer T> ? T : never };
export type Config = Readonly<RawConfig>;

/** A setting, or what it names on this machine, that cannot be used: the start fails with its message alone. */
export class ConfigError extends Error {}

/** Resolves settings from defaults, then environment, then flags (later wins), validating each. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  argv: string[] = [],
  overrides: Partial<RawConfig> = {},
): Config {
  const flags = parseFlags(argv);
  const resolved: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(SETTINGS) as [keyof RawConfig, Setting<unknown>][]) {
    const given = name in overrides ? overrides[name] : (flags.get(s.flag) ?? env[s.env]);
    const value = given === undefined || given === '' ? s.fallback(resolved) : given;
    const parsed = s.schema.safeParse(value);
    if (!parsed.success) {
      const shown = s.secret ? '[redacted]' : JSON.stringify(s.show ? s.show(value) : value);
      throw new ConfigError(`${s.env} (${s.flag}) = ${shown}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    }
    resolved[name] = parsed.data;
  }
  const config = resolved as unknown as RawConfig;
  if (!config.allowSameSiteReleases && releasesSameSiteAsPlayer(config.playOrigin, config.releaseOrigin)) {
    throw new ConfigError(
      `MARQUEE_RELEASE_ORIGIN (--release-origin) = ${JSON.stringify(config.releaseOrigin)} is the same site as MARQUEE_PLAY_ORIGIN (--play-origin) = ${JSON.stringify(config.playOrigin)}: ` +
        "an application frame on a release host of the player's own registrable domain runs on the player's main thread, so one that hangs freezes the screen. " +
        'Serve release hosts under another registrable domain (for example https://{label}.example-apps.net beside https://play.example.com), ' +
        'or set MARQUEE_ALLOW_SAME_SITE_RELEASES=1 to accept that risk.',
    );
  }
  const unreachable = unreachablePlane(config);
  if (unreachable) throw new ConfigError(unreachable);
  return Object.freeze(config);
}

const ORIGIN_SETTINGS = ['controlOrigin', 'playOrigin', 'dashboardOrigin'] as const;

/**
 * Requests reach a plane by their Host alone (server/http/dispatch.ts): a release host serves only
 * its release and the dashboard's host only the dashboard. An origin whose host one of those takes
 * would leave its plane answering 404 to everyone, so such a configuration never starts.
 */
function unreachablePlane(config: RawConfig): string | undefined {
  const named = (name: (typeof ORIGIN_SETTINGS)[number] | 'releaseOrigin') =>
    `${SETTINGS[name].env} (${SETTINGS[name].flag}) = ${JSON.stringify(config[name])}`;
  const hostOf = (origin: string) => new URL(origin).host.toLowerCase();
  const releaseSuffix = hostOf(config.releaseOrigin.replace('{label}', 'x')).slice(1);
  for (const name of ORIGIN_SETTINGS) {
    const host = hostOf(config[name]);
    if (host.endsWith(releaseSuffix) && !host.slice(0, -releaseSuffix.length).includes('.'))
      return `${named(name)} is a release host of ${named('releaseOrigin')}: that host would serve one release and nothing else. Give it a host outside the release domain.`;
  }
  const dashboard = hostOf(config.dashboardOrigin);
  for (const name of ['controlOrigin', 'playOrigin'] as const) {
    if (hostOf(config[name]) === dashboard)
      return (
        `${named('dashboardOrigin')} has the host of ${named(name)}: that host would serve the dashboard alone, ` +
        `so the ${name === 'controlOrigin' ? 'control plane (/api/v1, /operator/v1)' : 'runtime plane and the player'} would answer 404 there. ` +
        `Give the dashboard a host of its own (for example https://dashboard.${new URL(config[name]).hostname}).`
      );
  }
  return undefined;
}

function parseFlags(argv: string[]): Map<string, string> {
  const known = new Set(Object.values(SETTINGS).map((s) => s.flag));
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!known.has(flag)) throw new ConfigError(`unknown flag ${flag}; known flags: ${[...known].join(', ')}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`flag ${flag} needs a value`);
    flags.set(flag, value);
  }
  return flags;
}

/** Whether the arguments ask for `usage()` instead of a start. */
export function asksForHelp(argv: string[]): boolean {
  return argv.some((arg) => arg === '--help' || arg === '-h');
}

/** `--help`: every setting with its flag, environment variable, default and meaning. */
export function usage(): string {
  const defaults: Record<string, unknown> = {};
  const lines = [
    'Usage: npm start -- [--flag value | --flag=value]...',
    '       node --import tsx server/main.ts [--flag value | --flag=value]...',
    '',
    'Serves the control plane, the runtime plane and player, release hosts and the dashboard on one port.',
    'Each flag can also be given by its environment variable; a flag wins over the environment.',
    '',
  ];
  for (const [name, s] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    const value = s.fallback(defaults);
    defaults[name] = value;
    const shown =
      value === undefined || (Array.isArray(value) && value.length === 0)
        ? 'unset'
        : s.show
          ? s.show(value)
          : String(value);
    lines.push(`  ${s.flag} <value>  (${s.env}; default ${shown})`, ...wrapped(s.doc, '      ', 100), '');
  }
  return lines.join('\n');
}

function wrapped(text: string, indent: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines;
}

/** The configuration as printable lines, secrets masked. */
export function describeConfig(config: Config): string[] {
  return (Object.entries(SETTINGS) as [keyof RawConfig, Setting<unknown>][]).map(([name, s]) => {
    const value = config[name];
    const shown = value === undefined ? '(unset)' : s.secret ? '[redacted]' : s.show ? s.show(value) : String(value);
    return `${s.env}=${shown}`;
  });
}
