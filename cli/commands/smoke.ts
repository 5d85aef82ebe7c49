import { CliError, UsageError } from '../errors';
import { type CommandContext, writeLine } from './context';

/** Milliseconds each smoke request may take. */
const REQUEST_TIMEOUT_MS = 10_000;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

interface Check {
  name: string;
  run(): Promise<string | undefined>;
}

/**
 * `smoke --key KEY [--url URL] [--write]`: calls a running API the way a client does and checks the answers that
 * prove a deployment works end to end: the authorizer's key lookup (GetItem), the list (Scan), API Gateway's own
 * 401/404/405 answers and the handler's validation; with `--write`, also an update (UpdateItem) that sets the first
 * entry's quantity to the value it already has.
 *
 * The URL is `--url`, else the stage's `ApiUrl` output with `--stage`, else the local `npm start` gateway.
 */
export async function smoke(context: CommandContext): Promise<void> {
  const key = typeof context.options.key === 'string' ? context.options.key : context.io.env.PETSTORE_API_KEY;
  if (!key) throw new UsageError('smoke needs --key KEY (or PETSTORE_API_KEY): an API key of the stage');
  const url = await baseUrl(context);
  const auth = { Authorization: `Bearer ${key}` };
  let first: { petId: string; quantity: number } | undefined;

  const checks: Check[] = [
    {
      name: 'GET /inventory without a key answers 401 UNAUTHORIZED with WWW-Authenticate',
      run: async () => {
        const answer = await send(url, 'GET', '/inventory');
        return (
          expectError(answer, 401, 'UNAUTHORIZED') ??
          (answer.headers.get('www-authenticate') === 'Bearer' ? undefined : 'no WWW-Authenticate: Bearer')
        );
      },
    },
    {
      name: 'GET /inventory with the key answers 200 and a JSON array of {petId, quantity, status}',
      run: async () => {
        const answer = await send(url, 'GET', '/inventory', auth);
        if (answer.status !== 200) return `status ${answer.status}: ${answer.text.slice(0, 200)}`;
        if (answer.headers.get('cache-control') !== 'no-store') return 'no Cache-Control: no-store';
        // petIds are int64: read their digits from the text, not through a JavaScript number.
        const entries = [
          ...answer.text.matchAll(/\{"petId":(-?\d+),"quantity":(\d+),"status":"(available|pending|sold)"\}/g),
        ];
        const parsed = JSON.parse(answer.text) as unknown;
        if (!Array.isArray(parsed) || parsed.length !== entries.length)
          return 'the body is not an array of InventoryItem';
        const [, petId, quantity] = entries[0] ?? [];
        if (petId !== undefined && quantity !== undefined) first = { petId, quantity: Number(quantity) };
        return undefined;
      },
    },
    {
      name: 'an unknown path answers 404 NOT_FOUND (API Gateway)',
      run: async () => expectError(await send(url, 'GET', '/no-such-route', auth), 404, 'NOT_FOUND'),
    },
    {
      name: 'DELETE /inventory answers 405 METHOD_NOT_ALLOWED with Allow: GET (API Gateway)',
      run: async () => {
        const answer = await send(url, 'DELETE', '/inventory', auth);
        return (
          expectError(answer, 405, 'METHOD_NOT_ALLOWED') ??
          (answer.headers.get('allow') === 'GET' ? undefined : 'no Allow: GET')
        );
      },
    },
    {
      name: 'PATCH with a negative quantity answers 400 VALIDATION_FAILED and writes nothing',
      run: async () =>
        expectError(
          await send(url, 'PATCH', '/inventory/1', { ...auth, 'Content-Type': 'application/json' }, '{"quantity":-1}'),
          400,
          'VALIDATION_FAILED',
        ),
    },
  ];
  if (context.options.write === true) {
    checks.push({
      name: 'PATCH of the first entry with its own quantity answers 200 and the same entry',
      run: async () => {
        if (!first) return 'the inventory is empty: nothing to update';
        const body = `{"quantity":${first.quantity}}`;
        const answer = await send(
          url,
          'PATCH',
          `/inventory/${first.petId}`,
          { ...auth, 'Content-Type': 'application/json' },
          body,
        );
        if (answer.status !== 200) return `status ${answer.status}: ${answer.text.slice(0, 200)}`;
        const expected = new RegExp(
          `^\\{"petId":${first.petId},"quantity":${first.quantity},"status":"(available|pending|sold)"\\}$`,
        );
        return expected.test(answer.text) ? undefined : `unexpected body ${answer.text.slice(0, 200)}`;
      },
    });
  }

  writeLine(context.io.stderr, `Smoke test of ${url}`);
  let failed = 0;
  for (const check of checks) {
    let problem: string | undefined;
    try {
      problem = await check.run();
    } catch (error) {
      problem = `no answer: ${(error as Error).message}`;
    }
    if (problem) failed++;
    writeLine(context.io.stdout, problem ? `FAIL ${check.name}: ${problem}` : `ok   ${check.name}`);
  }
  writeLine(context.io.stdout, `${checks.length - failed} passed, ${failed} failed`);
  if (failed > 0) throw new CliError(`${failed} of ${checks.length} smoke checks failed against ${url}`);
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

async function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Undefined when the answer is the Error body with this status and code, else what is wrong. */
function expectError(answer: Answer, status: number, code: string): string | undefined {
  if (answer.status !== status) return `status ${answer.status} instead of ${status}: ${answer.text.slice(0, 200)}`;
  try {
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    if (body.code !== code || body.status !== status || typeof body.message !== 'string')
      return `Error body ${answer.text.slice(0, 200)}`;
  } catch {
    return `not a JSON Error body: ${answer.text.slice(0, 200)}`;
  }
  return undefined;
}
