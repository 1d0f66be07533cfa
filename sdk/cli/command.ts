// One CLI command, declared as data: its words, arguments and options, what it runs, and how its
// result reads for a person. The runner (run.ts) turns the table of these into the argument
// parser, the envelope, exit codes, retries and Ctrl-C handling, so a new command (a fleet action,
// a screenshot) is one entry and nothing else.
import type { CallOptions, GuardedCallOptions, MarqueeClient } from '../client/marquee-client';
import type { ConfigFile } from './config-file';
import type { Block } from './output';
import type { Progress } from './progress';

export interface OptionSpec {
  /** Commander syntax: `-o, --output <file>`, `--tag <tag>`, `--archived`. */
  flags: string;
  description: string;
  /** How the value is read: a positive integer, a non-negative integer, or a comma-separated list. */
  parse?: 'positive-int' | 'non-negative-int' | 'positive-number' | 'list';
  choices?: readonly string[];
  default?: string | boolean;
  /** The same option may be given several times (`--media a --media b`). */
  repeatable?: boolean;
}

export interface CommandContext {
  /** Positional arguments in the order the command declares them (variadic ones as arrays). */
  readonly args: (string | string[] | undefined)[];
  /** The command's options, camelCased (`--if-match` → `ifMatch`). */
  readonly options: Record<string, unknown>;
  readonly apiUrl: string;
  readonly config: ConfigFile;
  readonly json: boolean;
  /** Aborted by Ctrl-C or SIGTERM: pass it on, and undo what you started when it fires. */
  readonly signal: AbortSignal;
  /** The client with this server's project credential; enrolls a project on first use. */
  client(): Promise<MarqueeClient>;
  /** A client without a credential (status routes). */
  publicClient(): MarqueeClient;
  /** The fetch the clients use (it notes each answer's request id for the envelope), for SDK helpers that take one. */
  readonly fetch: typeof fetch;
  /** The command's idempotency key and signal: pass to its one write, whose retries reuse the key. */
  call(): CallOptions;
  /** As call(), plus --if-match when given. */
  guarded(): GuardedCallOptions;
  /** A progress line on stderr (silent unless stderr is a terminal or --progress was given). */
  progress(label: string): Progress;
  /** Asks a question on the terminal; undefined when stdin or stderr is not one (agents, scripts). */
  readonly prompt: ((question: string) => Promise<string>) | undefined;
  /** Prints blocks now, for a person (a followed event); nothing with --json or --quiet. */
  emit(blocks: Block[]): void;
  /** A note for a person on stderr (never with --quiet); never put a secret in it. */
  note(text: string): void;
  /** What someone must act on for the command to go on (an approval URL and code): on stderr even with --quiet. */
  instruct(text: string): void;
  /** Each answer's Date header beside the local time half way through its request (doctor's skew check). */
  readonly serverDates: readonly { serverMs: number; localMs: number }[];
}

export interface CommandSpec<T = unknown> {
  /** The words that invoke it: `screen archive`, `doctor`. */
  name: string;
  summary: string;
  /** Longer help shown under the usage line. */
  description?: string;
  /** Commander syntax: `<id>`, `[file]`, `<ids...>`. */
  arguments?: string[];
  options?: OptionSpec[];
  /** Needs no server (packing): the config file is not even read. */
  local?: boolean;
  /** Adds --if-match <revision>, sent as If-Match by `guarded()`. */
  ifMatch?: boolean;
  /** Adds --idempotency-key <key> (commands that send exactly one write). */
  idempotencyKeyOption?: boolean;
  run(ctx: CommandContext): Promise<T>;
  /** The result for a person; without it, the data is printed as fields or JSON. */
  human?(data: T): Block[];
  /**
   * What --quiet prints: the essential value a script wants, usually ids (`ID=$(marquee screen pair … -q)`),
   * or a link the command made to be handed over. A command that makes something shown once has one.
   */
  ids?(data: T): string[];
}

/** Keeps each entry's result type tied to its human() and ids(). */
export function command<T>(spec: CommandSpec<T>): CommandSpec<T> {
  return spec;
}

/** The groups commands live under, with the plural alias each also answers to. */
export const GROUPS: Record<string, { summary: string; alias?: string }> = {
  project: { summary: 'the project this credential belongs to' },
  account: { summary: 'the project as GET /api/v1/account shows it' },
  auth: { summary: "this CLI's credential: what it acts for, and revoking it for good" },
  comment: { summary: 'your own notes on screens, playlists and pages', alias: 'comments' },
  app: { summary: 'applications: pack, upload, releases', alias: 'apps' },
  media: { summary: 'media: upload (with optional ffmpeg transcode), tags, export' },
  playlist: { summary: 'playlists from JSON files, and folder bundles with their media', alias: 'playlists' },
  screen: { summary: 'screens: pair, provision, assign, lifecycle', alias: 'screens' },
  kv: { summary: "an application's key/value storage" },
  events: { summary: 'durable events: list, follow', alias: 'event' },
  operation: { summary: 'durable operations: show, wait, cancel', alias: 'operations' },
  invitation: { summary: 'invite people into the project: by email or a link; list, revoke', alias: 'invitations' },
  agent: { summary: 'the agent installation this credential is: show, disconnect' },
  billing: { summary: 'credits: balance and statement' },
  feedback: { summary: 'bug reports and feature requests to the operators of this server' },
};
