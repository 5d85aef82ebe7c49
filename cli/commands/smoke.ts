import { failedChecks, runApiChecks } from '../../functions/self-check/checks';
import { CliError } from '../errors';
import { apiBaseUrl, apiKeyOption, type CommandContext, writeLine } from './context';

/**
 * `smoke`: the deploy checks against a running API, one line each, with the given key as their write key (the
 * checks of a read key need one of their own: the deploy self-check makes both).
 */
export async function smoke(context: CommandContext): Promise<void> {
  const key = apiKeyOption(context, 'smoke');
  const url = await apiBaseUrl(context);

  writeLine(context.io.stderr, `Smoke test of ${url}`);
  const results = await runApiChecks({
    baseUrl: url,
    keys: { write: key },
    onResult: ({ name, problem }) =>
      writeLine(context.io.stdout, problem === undefined ? `ok   ${name}` : `FAIL ${name}: ${problem}`),
  });
  const failures = failedChecks(results);
  const failed = failures.length;
  writeLine(context.io.stdout, `${results.length - failed} passed, ${failed} failed`);
  if (failed === 0) return;
  // A read key passes the reads and is refused everything else with 403 ACCESS_DENIED: say so, not "broken stage".
  // (A firewall block is 403 too, but then the reads fail as well.)
  const readKey =
    failures.length < results.length && failures.every(({ problem }) => /\bstatus 403\b/.test(problem ?? ''));
  throw new CliError(
    `${failed} of ${results.length} smoke checks failed against ${url}` +
      (readKey
        ? '; some were refused with 403 ACCESS_DENIED, which is what a read key gets for anything but a read: ' +
          'smoke needs a write key (keys create --scope write)'
        : ''),
  );
}
