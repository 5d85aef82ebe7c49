/**
 * `npm run cli -- <command>`: the operator CLI (API keys, inventory import/export). See docs/cli.md.
 * The work is in `run` (cli/run.ts) so tests drive it in-process; this file only binds it to the process.
 */
import { run } from './run';

// `npm run cli -- inventory export | head` closes stdout early: that is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
});

run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  interruptSignal() {
    const interrupt = new AbortController();
    // Once: a second Ctrl-C ends the process as usual, should the command not stop.
    process.once('SIGINT', () => interrupt.abort());
    return interrupt.signal;
  },
}).then((code) => {
  process.exitCode = code;
});
