// Test support: the `marquee` command run inside the test process (runCli over the real command
// table, with captured streams and an environment of the test's own), for the many checks that
// need no process boundary; cli.test.ts keeps the subprocess runs that do (signals, exit, bin).
import { PassThrough } from 'node:stream';
import { COMMANDS } from '../command-table';
import { runCli } from '../run';
import { envelopeOf, type CliEnvelope, type CliResult } from './cli-process';

export interface InProcessCli {
  /** Output so far. */
  readonly stdout: string;
  readonly stderr: string;
  done: Promise<CliResult>;
}

/** Starts a command line; `done` resolves with its exit code once it returned. */
export function startInProcess(args: string[], env: Record<string, string | undefined>): InProcessCli {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  stdin.end();
  const out = { stdout: '', stderr: '' };
  stdout.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
  stderr.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
  const defined = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
  const done = runCli(
    args,
    COMMANDS,
    {
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: stderr as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      env: defined,
    },
    new AbortController().signal,
    () => false,
  ).then(async (code) => {
    await new Promise((resolve) => setImmediate(resolve));
    return { code, ...out };
  });
  return {
    get stdout() {
      return out.stdout;
    },
    get stderr() {
      return out.stderr;
    },
    done,
  };
}

export function runInProcess(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return startInProcess(args, env).done;
}

/** Runs with --json and answers the exit code and its one envelope. */
export async function jsonInProcess(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<CliResult & { envelope: CliEnvelope }> {
  const result = await runInProcess([...args, '--json'], env);
  return { ...result, envelope: envelopeOf(result) };
}
