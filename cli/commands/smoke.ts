import { failedChecks, runSmokeChecks } from '../../functions/self-check/checks';
import { CliError, UsageError } from '../errors';
import { type CommandContext, writeLine } from './context';

/**
 * `smoke --key KEY [--url URL] [--write]`: runs the smoke checks (`functions/self-check/checks.ts`, the same ones
 * a stage's deploy self-check runs) against a running API and prints one line per check; with `--write`, also an
 * update that sets the first entry's quantity to the value it already has.
 *
 * The URL is `--url`, else the stage's `ApiUrl` output with `--stage`, else the local `npm start` gateway.
 */
export async function smoke(context: CommandContext): Promise<void> {
  const key = typeof context.options.key === 'string' ? context.options.key : context.io.env.PETSTORE_API_KEY;
  if (!key) throw new UsageError('smoke needs --key KEY (or PETSTORE_API_KEY): an API key of the stage');
  const url = await baseUrl(context);

  writeLine(context.io.stderr, `Smoke test of ${url}`);
  const results = await runSmokeChecks({
    baseUrl: url,
    key,
    write: context.options.write === true,
    onResult: ({ name, problem }) =>
      writeLine(context.io.stdout, problem === undefined ? `ok   ${name}` : `FAIL ${name}: ${problem}`),
  });
  const failed = failedChecks(results).length;
  writeLine(context.io.stdout, `${results.length - failed} passed, ${failed} failed`);
  if (failed > 0) throw new CliError(`${failed} of ${results.length} smoke checks failed against ${url}`);
}

async function baseUrl(context: CommandContext): Promise<string> {
  if (typeof context.options.url === 'string') {
    if (!/^https?:\/\/[^\s]+$/.test(context.options.url))
      throw new UsageError(`--url must be an http(s) URL; got "${context.options.url}"`);
    return context.options.url.replace(/\/+$/, '');
  }
  if (typeof context.options.stage === 'string') {
    const target = await context.target();
    if (!target.apiUrl) throw new UsageError(`the ${target.description} stack has no ApiUrl output; pass --url`);
    return target.apiUrl.replace(/\/+$/, '');
  }
  return `http://127.0.0.1:${context.io.env.PORT || 3000}/v1`;
}
