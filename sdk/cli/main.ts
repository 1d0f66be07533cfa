// The `marquee` command: `node --import tsx sdk/cli/main.ts …`, or `npx marquee …` through bin/.
// Ctrl-C (SIGINT) and SIGTERM abort the running command, which undoes what it started (an upload's
// reservation, a temporary file); a second signal, or a command that does not finish its cleanup
// in time, ends the process at once. Either way the exit code is 130.
import { COMMANDS } from './command-table';
import { EXIT } from './exit-codes';
import { runCli } from './run';

/** How long a stopped command may take to undo what it started before the process just ends. */
const CLEANUP_GRACE_MS = 10_000;

const controller = new AbortController();
let signals = 0;
const onSignal = () => {
  signals++;
  if (signals > 1) process.exit(EXIT.interrupted);
  controller.abort(new DOMException('stopped by a signal', 'AbortError'));
  setTimeout(() => process.exit(EXIT.interrupted), CLEANUP_GRACE_MS).unref();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const code = await runCli(
  process.argv.slice(2),
  COMMANDS,
  { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env },
  controller.signal,
  () => signals > 0,
);
// Streams and keep-alive sockets may still be open: end with the code once output is flushed.
process.stdout.write('', () => process.exit(code));
