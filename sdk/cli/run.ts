// The runner: the command table becomes a commander program; the chosen command runs with a
// context (client, credential, idempotency key, signal, progress); its result or failure becomes
// human output or exactly one JSON envelope, and an exit code of its class.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { createMarqueeClient, newIdempotencyKey, type MarqueeClient, type RetryNotice } from '../client/marquee-client';
import { GROUPS, type CommandContext, type CommandSpec, type OptionSpec } from './command';
import { API_URL_ENV, ConfigFile, configPathFrom, DEFAULT_API_URL, normalizeApiUrl } from './config-file';
import { ensureEnrolled, terminalPrompt } from './enrollment';
import { EXIT, failureOf, type ErrorReport } from './exit-codes';
import { escapeUnsafe, escapeUnsafeInJson } from '../contract/untrusted-text';
import { envelopeText, renderError, shown, type Envelope } from './output';
import { createProgress, silentProgress } from './progress';
import { CLI_VERSION } from './version';

export interface CliIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
}

/** Waits for a Retry-After up to this long by default; a longer one fails at once with retry_after. */
export const DEFAULT_MAX_RETRY_WAIT_SECONDS = 30;
/** Attempts per request, the first included (network failures, 429/503 with Retry-After). */
const ATTEMPTS = 3;

const EXIT_CODE_HELP = `
Exit codes: 0 ok, 1 unexpected, 2 usage or unusable input, 3 auth (401/403), 4 not found,
5 conflict (409), 6 stale --if-match (412), 7 rate limited (429), 8 other client error (4xx),
9 server error (5xx), 10 network, 11 timeout, 12 local config, 13 operation failed,
130 interrupted (Ctrl-C). With --json, stdout holds exactly one envelope:
{"ok": true, "data": …, "request_id": …} or {"ok": false, "error": {"code", "detail", …}, "request_id": …}.`;

interface GlobalOptions {
  json?: boolean;
  quiet?: boolean;
  apiUrl?: string;
  config?: string;
  email?: string;
  progress?: boolean;
  maxRetryWait?: number;
}

function parseOption(spec: OptionSpec) {
  return (value: string, previous: unknown) => {
    let parsed: unknown = value;
    if (spec.parse === 'positive-int' || spec.parse === 'non-negative-int') {
      const min = spec.parse === 'positive-int' ? 1 : 0;
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min)
        throw new InvalidArgumentError(`expected an integer of at least ${min}`);
      parsed = Number(value);
    } else if (spec.parse === 'positive-number') {
      parsed = Number(value);
      if (!/^\d+(\.\d+)?$/.test(value) || !(Number(parsed) > 0))
        throw new InvalidArgumentError('expected a positive number');
    } else if (spec.parse === 'list')
      parsed = value
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean);
    if (spec.repeatable) return [...((previous as unknown[] | undefined) ?? []), parsed];
    return parsed;
  };
}

/** `--if-match 3` or `--if-match '"3"'` (an ETag as printed). */
function parseRevision(value: string): number {
  const match = /^"?([1-9][0-9]{0,15})"?$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('expected a revision: a positive integer such as 3');
  return Number(match[1]);
}

function parseIdempotencyKey(value: string): string {
  if (!/^[\x21-\x7e]{8,200}$/.test(value)) throw new InvalidArgumentError('expected 8 to 200 visible ASCII characters');
  return value;
}

function addOption(target: Command, spec: OptionSpec): void {
  const option = new Option(spec.flags, spec.description);
  if (spec.choices) option.choices(spec.choices);
  else if (spec.parse || spec.repeatable) option.argParser(parseOption(spec));
  if (spec.default !== undefined) option.default(spec.default);
  target.addOption(option);
}

interface Selected {
  spec: CommandSpec<unknown>;
  command: Command;
  args: (string | string[] | undefined)[];
}

function buildProgram(table: CommandSpec<unknown>[], io: CliIo, json: boolean, select: (s: Selected) => void) {
  const program = new Command('marquee')
    .description('Drive a Marquee server: screens, playlists, media, applications, events.')
    .version(CLI_VERSION, '-V, --version')
    .option('--json', 'print exactly one JSON envelope {ok, data | error, request_id}')
    .option('-q, --quiet', 'print only the ids of the result')
    .option('--api-url <url>', `the server (env ${API_URL_ENV}; default: the config file's, else ${DEFAULT_API_URL})`)
    .option('--config <file>', 'the config file (env MARQUEE_CONFIG; default ~/.config/marquee/config.json)')
    .option('--email <address>', 'contact email for enrolling a project on first use')
    .option('--progress', 'show progress even when stderr is not a terminal')
    .option('--no-progress', 'never show progress')
    .addOption(
      new Option('--max-retry-wait <seconds>', 'wait out a Retry-After up to this long (429, 503)')
        .argParser(parseOption({ flags: '', description: '', parse: 'non-negative-int' }))
        .default(DEFAULT_MAX_RETRY_WAIT_SECONDS),
    )
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', EXIT_CODE_HELP)
    .showHelpAfterError(!json)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      // With --json the envelope carries the error; without, commander's message is the output.
      writeErr: (text) => (json ? undefined : io.stderr.write(text)),
    });
  const groups = new Map<string, Command>();
  for (const spec of table) {
    const words = spec.name.split(' ');
    let parent = program;
    for (const word of words.slice(0, -1)) {
      let group = groups.get(word);
      if (!group) {
        const info = GROUPS[word];
        group = parent.command(word).description(info?.summary ?? word);
        if (info?.alias) group.alias(info.alias);
        groups.set(word, group);
      }
      parent = group;
    }
    const sub = parent.command(words.at(-1)!).description(spec.summary);
    if (spec.description) sub.addHelpText('after', `\n${spec.description}`);
    for (const argument of spec.arguments ?? []) sub.argument(argument);
    for (const option of spec.options ?? []) addOption(sub, option);
    if (spec.ifMatch)
      sub.addOption(
        new Option('--if-match <revision>', 'only if the resource is still at this revision (else 412)').argParser(
          parseRevision,
        ),
      );
    if (spec.idempotencyKeyOption)
      sub.addOption(
        new Option(
          '--idempotency-key <key>',
          'reuse the key of an earlier attempt whose outcome is unknown (default: a fresh one)',
        ).argParser(parseIdempotencyKey),
      );
    sub.action((...received: unknown[]) => {
      const command = received.at(-1) as Command;
      select({ spec, command, args: received.slice(0, -2) as (string | string[] | undefined)[] });
    });
  }
  return program;
}

function abortableSleep(signal: AbortSignal) {
  return (ms: number) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
}

/**
 * Runs one command line (without `node` and the script) and answers its exit code. `signal` is
 * aborted by Ctrl-C; `interrupted()` tells a failure caused by it from any other.
 */
export async function runCli(
  argv: string[],
  table: CommandSpec<unknown>[],
  io: CliIo,
  signal: AbortSignal,
  interrupted: () => boolean,
): Promise<number> {
  const json = argv.includes('--json');
  let lastRequestId: string | null = null;
  const write = (text: string) => io.stdout.write(text);
  const fail = (error: ErrorReport, exitCode: number): number => {
    if (json) write(envelopeText({ ok: false, error, request_id: error.request_id ?? lastRequestId }));
    else io.stderr.write(renderError(error));
    return exitCode;
  };

  let selected: Selected | undefined;
  const program = buildProgram(table, io, json, (s) => (selected = s));
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0)
      return EXIT.ok;
    // `commander.help`: a group named without a command (`marquee screen`); its help went to stderr.
    const detail =
      error.code === 'commander.help' ? 'name a command; see marquee --help' : error.message.replace(/^error: /, '');
    return json ? fail({ code: 'usage', detail }, EXIT.usage) : EXIT.usage;
  }
  if (!selected) {
    // A group named without a command (`marquee screen`): its help, as usage.
    if (!json) program.outputHelp({ error: true });
    return json ? fail({ code: 'usage', detail: 'name a command; see marquee --help' }, EXIT.usage) : EXIT.usage;
  }

  const { spec, command, args } = selected;
  const globals = command.optsWithGlobals<GlobalOptions & Record<string, unknown>>();
  const quiet = globals.quiet === true;
  // Notes may quote the server (a project name, a problem code): the untrusted-text rule applies.
  const instruct = (text: string) => io.stderr.write(`${escapeUnsafe(text)}\n`);
  const note = (text: string) => {
    if (!quiet) instruct(text);
  };
  const serverDates: { serverMs: number; localMs: number }[] = [];
  /** Said with a 401 once a stored credential was sent: how to get past one the server no longer knows. */
  let staleCredentialHint: string | undefined;

  try {
    const config = new ConfigFile(configPathFrom(globals.config, io.env));
    const permission = await config.permissionProblem();
    if (permission) note(`warning: ${permission}`);
    const explicitUrl = globals.apiUrl ?? io.env[API_URL_ENV];
    const apiUrl = normalizeApiUrl(
      explicitUrl || (spec.local ? DEFAULT_API_URL : ((await config.read()).api_url ?? DEFAULT_API_URL)),
    );
    const maxRetryWait = globals.maxRetryWait ?? DEFAULT_MAX_RETRY_WAIT_SECONDS;
    const recordingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      lastRequestId = response.headers.get('x-request-id') ?? lastRequestId;
      return response;
    };
    const onRetry = (retry: RetryNotice) => {
      const why =
        retry.reason === 'network' ? 'got no answer' : `answered ${retry.problem?.status} ${retry.problem?.code ?? ''}`;
      note(`${retry.label} ${why}; retrying in ${Math.max(1, Math.round(retry.delayMs / 1000))} s`);
    };
    const makeClient = (token?: string): MarqueeClient =>
      createMarqueeClient({
        baseUrl: apiUrl,
        token,
        fetch: recordingFetch,
        maxAttempts: ATTEMPTS,
        maxRetryDelayMs: maxRetryWait * 1000,
        sleep: abortableSleep(signal),
        onRetry,
        onServerDate: (serverMs, localMs) => serverDates.push({ serverMs, localMs }),
      });

    // Human output measures text in display cells; a --json run never loads that.
    const human = json || quiet ? undefined : await import('./human-output');
    const options = command.opts<Record<string, unknown>>();
    const idempotencyKey = (options.idempotencyKey as string | undefined) ?? newIdempotencyKey();
    let authorized: MarqueeClient | undefined;
    const prompt = io.stdin.isTTY && io.stderr.isTTY ? terminalPrompt(io.stdin, io.stderr) : undefined;
    const progressWanted =
      globals.progress === true || (globals.progress !== false && io.stderr.isTTY === true && !quiet);
    const ctx: CommandContext = {
      args,
      options: { ...options, email: globals.email },
      apiUrl,
      config,
      json,
      signal,
      serverDates,
      publicClient: () => makeClient(),
      fetch: recordingFetch,
      async client() {
        if (authorized) return authorized;
        const { entry } = await ensureEnrolled({
          config,
          apiUrl,
          email: globals.email,
          prompt,
          client: makeClient(),
          signal,
          note,
        });
        authorized = makeClient(entry.token);
        staleCredentialHint = `the credential stored for ${apiUrl} is revoked or unknown there: marquee auth revoke --yes removes it from ${config.path}, then the next command enrolls anew (or marquee agent connect joins an existing project)`;
        return authorized;
      },
      call: () => ({ idempotencyKey, signal }),
      guarded: () => {
        const ifMatch = options.ifMatch as number | undefined;
        return ifMatch === undefined ? { idempotencyKey, signal } : { idempotencyKey, signal, ifMatch };
      },
      progress: (label) =>
        progressWanted ? createProgress(io.stderr, label, io.stderr.isTTY === true) : silentProgress,
      prompt,
      note,
      instruct,
      emit: (blocks) => {
        if (human) write(human.renderBlocks(blocks));
      },
    };

    const data = await spec.run(ctx);
    if (json) write(envelopeText({ ok: true, data: data ?? null, request_id: lastRequestId } satisfies Envelope));
    else if (quiet) {
      const ids = spec.ids?.(data) ?? [];
      if (ids.length > 0) write(`${ids.map(shown).join('\n')}\n`);
    } else if (spec.human && human) write(human.renderBlocks(spec.human(data)));
    else if (data !== undefined) write(`${escapeUnsafeInJson(JSON.stringify(data, null, 2))}\n`);
    return EXIT.ok;
  } catch (error) {
    const { exitCode, error: report } = failureOf(error, interrupted());
    if (report.code === 'usage') report.hint ??= `see: marquee ${spec.name} --help`;
    if (report.code === 'unauthorized' && staleCredentialHint) report.hint ??= staleCredentialHint;
    return fail(report, exitCode);
  }
}
