// Test support: the `marquee` command run as a real subprocess of the built bundle
// (`node dist/cli/marquee.mjs`, see cli-bundle.ts), with its environment reduced to what a test
// names, and its output, exit code and envelope.
import { spawn, type ChildProcess } from 'node:child_process';
import { REPOSITORY } from '../bin/cli-bundle.js';
import { freshBundle } from './cli-bundle';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliEnvelope {
  ok: boolean;
  data?: any;
  error?: { code: string; detail: string; [member: string]: any };
  request_id: string | null;
}

export interface CliOptions {
  /** Variables for this run (MARQUEE_CONFIG, MARQUEE_API_URL, PATH …), over a minimal base. */
  env?: Record<string, string | undefined>;
  stdin?: string;
  cwd?: string;
}

export interface RunningCli {
  child: ChildProcess;
  /** Output so far. */
  readonly stdout: string;
  readonly stderr: string;
  done: Promise<CliResult>;
}

/** Starts the CLI; `done` resolves when it exits. */
export function startCli(args: string[], options: CliOptions = {}): RunningCli {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    TMPDIR: process.env.TMPDIR ?? '/tmp',
  };
  for (const [name, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[name] = value;
  const child = spawn(process.execPath, [freshBundle(), ...args], {
    cwd: options.cwd ?? REPOSITORY,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
  child.stdin!.end(options.stdin ?? '');
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: out.stdout, stderr: out.stderr }));
  });
  return {
    child,
    get stdout() {
      return out.stdout;
    },
    get stderr() {
      return out.stderr;
    },
    done,
  };
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** The one envelope a --json run printed: stdout must be exactly one JSON document. */
export function envelopeOf(result: CliResult): CliEnvelope {
  const text = result.stdout.trim();
  if (text.split('\n').length !== 1)
    throw new Error(`expected one envelope line on stdout, got:\n${result.stdout}\nstderr:\n${result.stderr}`);
  try {
    return JSON.parse(text) as CliEnvelope;
  } catch {
    throw new Error(`stdout is not JSON:\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}
