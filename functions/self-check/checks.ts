// The smoke checks the CLI's `smoke` and the deploy self-check run: a client's calls that prove a deployment works.

import { readInventoryItem } from '../inventory/json';
import { type JsonWithLiterals, parseJsonWithLiterals } from '../inventory/json-literals';
import { type InventoryItem, MIN_PET_ID } from '../inventory/types';

/** Milliseconds each request may take: room for the cold start of the function it reaches. */
const SMOKE_REQUEST_TIMEOUT_MS = 10_000;

/** Milliseconds the list check's page of one entry may take: a cold start, the authorizer and a paced Query. */
const SMOKE_LIST_TIMEOUT_MS = 30_000;

/** The pets the 404 checks may use, in order: the smallest int64s; one that has an entry is skipped, never changed. */
export const ABSENT_PET_CANDIDATES: readonly string[] = Array.from({ length: 8 }, (_, index) =>
  String(MIN_PET_ID + BigInt(index)),
);

/** The first of {@link ABSENT_PET_CANDIDATES}: the smallest int64. */
export const ABSENT_PET_ID = ABSENT_PET_CANDIDATES[0] as string;

/** Compare-and-set on 0: an entry created between the GET and the PATCH keeps its stock. */
const ABSENT_PET_PATCH = '{"quantity":0,"expectedQuantity":0}';

/** Each check's name in the reports, in running order; `compareAndSet` runs only with `write: true`. */
export const SMOKE_CHECK_NAMES = {
  unauthorized: 'GET /inventory without a key answers 401 UNAUTHORIZED with WWW-Authenticate',
  list: 'GET /inventory?limit=1 with the key answers 200 and a JSON array of at most one {petId, quantity, status}',
  absentPet: `GET and PATCH of a pet with no entry (from ${ABSENT_PET_ID} up) answer 404 NOT_FOUND and change nothing`,
  readOne: 'GET /inventory/{petId} of the first listed entry answers 200 with that entry',
  unknownPath: 'an unknown path answers 404 NOT_FOUND (API Gateway)',
  methodNotAllowed: 'DELETE /inventory answers 405 METHOD_NOT_ALLOWED with Allow: GET (API Gateway)',
  invalidQuantity: 'PATCH with a negative quantity answers 400 VALIDATION_FAILED and writes nothing',
  compareAndSet: 'PATCH of the first entry with its own quantity (compare-and-set) answers 200 and the same entry',
} as const;

/** The longest one run without `write` can take, every request taking its whole time-out. */
export function worstSmokeRunMs(): number {
  const checks = Object.keys(SMOKE_CHECK_NAMES).length - 1;
  const otherRequests = checks - 2 + ABSENT_PET_CANDIDATES.length + 1;
  return SMOKE_LIST_TIMEOUT_MS + otherRequests * SMOKE_REQUEST_TIMEOUT_MS;
}

export interface SmokeCheckOptions {
  /** The API's base URL, ending in `/v1` (a trailing slash is ignored). */
  baseUrl: string;
  /** An API key of the target; sent only in the Authorization header, never reported. */
  key: string;
  /** Also set the first entry's quantity to the value it already has (an UpdateItem). @default false */
  write?: boolean;
  /** Called after each check, in order, for callers that report as they go. @default none */
  onResult?: (result: SmokeCheckResult) => void;
}

/** The outcome of one check: passed when `problem` is undefined. */
export interface SmokeCheckResult {
  name: string;
  /** What was wrong, with no key in it. */
  problem?: string;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** What the checks of one run share: how to call the API, and the list the second check read. */
interface SmokeRun {
  auth: Record<string, string>;
  json: Record<string, string>;
  send(method: string, path: string, headers?: Record<string, string>, body?: string, waitMs?: number): Promise<Answer>;
  /** The list as read by the list check: its first entry, if any; undefined when it could not be read. */
  listed?: { first?: InventoryItem };
}

interface Check {
  name: string;
  run(run: SmokeRun): Promise<string | undefined>;
}

/** Runs every check in order (each finishes or times out before the next starts) and returns their outcomes. */
export async function runSmokeChecks(options: SmokeCheckOptions): Promise<SmokeCheckResult[]> {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const auth = { Authorization: `Bearer ${options.key}` };
  // A broken target might echo the request back: the key is taken out of every answer before it is read, so
  // no problem reported (and no log line or CloudFormation event made of it) can carry it.
  const redact = (text: string) => (options.key.length > 0 ? text.replaceAll(options.key, '<the key>') : text);
  const run: SmokeRun = {
    auth,
    json: { ...auth, 'Content-Type': 'application/json' },
    send: async (method, path, headers = {}, body = undefined, waitMs = SMOKE_REQUEST_TIMEOUT_MS) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(waitMs),
      });
      return { status: response.status, headers: response.headers, text: redact(await response.text()) };
    },
  };
  const results: SmokeCheckResult[] = [];
  for (const check of options.write === true ? [...CHECKS, COMPARE_AND_SET] : CHECKS) {
    let problem: string | undefined;
    try {
      problem = await check.run(run);
    } catch (error) {
      problem = describeRequestError(error, SMOKE_REQUEST_TIMEOUT_MS);
    }
    const result = problem === undefined ? { name: check.name } : { name: check.name, problem: redact(problem) };
    results.push(result);
    options.onResult?.(result);
  }
  return results;
}

const CHECKS: readonly Check[] = [
  {
    name: SMOKE_CHECK_NAMES.unauthorized,
    run: async ({ send }) => {
      const answer = await send('GET', '/inventory');
      return (
        expectError(answer, 401, 'UNAUTHORIZED') ??
        (answer.headers.get('www-authenticate') === 'Bearer' ? undefined : 'no WWW-Authenticate: Bearer')
      );
    },
  },
  { name: SMOKE_CHECK_NAMES.list, run: checkList },
  { name: SMOKE_CHECK_NAMES.absentPet, run: checkAbsentPet },
  {
    name: SMOKE_CHECK_NAMES.readOne,
    run: async ({ send, auth, listed }) => {
      if (!listed) return 'not sent: the list could not be read';
      const first = listed.first;
      if (!first) return undefined;
      const answer = await send('GET', `/inventory/${first.petId}`, auth);
      if (answer.status !== 200) return `status ${answer.status}: ${excerpt(answer.text)}`;
      // The entry may have changed since the list; its petId and shape may not.
      return entryIn(answer.text)?.petId === first.petId ? undefined : `unexpected body ${excerpt(answer.text)}`;
    },
  },
  {
    name: SMOKE_CHECK_NAMES.unknownPath,
    run: async ({ send, auth }) => expectError(await send('GET', '/no-such-route', auth), 404, 'NOT_FOUND'),
  },
  {
    name: SMOKE_CHECK_NAMES.methodNotAllowed,
    run: async ({ send, auth }) => {
      const answer = await send('DELETE', '/inventory', auth);
      return (
        expectError(answer, 405, 'METHOD_NOT_ALLOWED') ??
        (answer.headers.get('allow') === 'GET' ? undefined : 'no Allow: GET')
      );
    },
  },
  {
    name: SMOKE_CHECK_NAMES.invalidQuantity,
    run: async ({ send, json }) =>
      expectError(await send('PATCH', '/inventory/1', json, '{"quantity":-1}'), 400, 'VALIDATION_FAILED'),
  },
];

/** One page of one entry, read whole: the same time for any store, and no stream left unread. */
async function checkList(run: SmokeRun): Promise<string | undefined> {
  let answer: Answer;
  try {
    answer = await run.send('GET', '/inventory?limit=1', run.auth, undefined, SMOKE_LIST_TIMEOUT_MS);
  } catch (error) {
    return describeRequestError(error, SMOKE_LIST_TIMEOUT_MS);
  }
  if (answer.status !== 200) return `status ${answer.status}: ${excerpt(answer.text)}`;
  if (answer.headers.get('cache-control') !== 'no-store') return 'no Cache-Control: no-store';
  const page = onePage(answer.text);
  if (!page) return `the body is not an array of at most one InventoryItem: ${excerpt(answer.text)}`;
  run.listed = page;
  return undefined;
}

/** The GET reads strongly consistently (the list does not), so a pet it answers 404 for has no entry now. */
async function checkAbsentPet({ send, auth, json }: SmokeRun): Promise<string | undefined> {
  for (const petId of ABSENT_PET_CANDIDATES) {
    const read = await send('GET', `/inventory/${petId}`, auth);
    if (read.status === 200) {
      if (entryIn(read.text)?.petId === petId) continue;
      return `GET of pet ${petId}: unexpected body ${excerpt(read.text)}`;
    }
    const absent = expectError(read, 404, 'NOT_FOUND');
    if (absent) return `GET of pet ${petId}: ${absent}`;
    const patched = expectError(await send('PATCH', `/inventory/${petId}`, json, ABSENT_PET_PATCH), 404, 'NOT_FOUND');
    return patched ? `PATCH of pet ${petId}: ${patched}` : undefined;
  }
  const last = ABSENT_PET_CANDIDATES[ABSENT_PET_CANDIDATES.length - 1];
  return `not sent: pets ${ABSENT_PET_ID} to ${last} all have entries, which this check must not change`;
}

const COMPARE_AND_SET: Check = {
  name: SMOKE_CHECK_NAMES.compareAndSet,
  run: async ({ send, json, listed }) => {
    const first = listed?.first;
    if (!first) return listed ? 'the inventory is empty: nothing to update' : 'not sent: the list could not be read';
    // Compare-and-set: a stock change made since the list was read is never overwritten.
    const body = `{"quantity":${first.quantity},"expectedQuantity":${first.quantity}}`;
    const answer = await send('PATCH', `/inventory/${first.petId}`, json, body);
    if (answer.status === 409 && expectError(answer, 409, 'CONFLICT') === undefined) return undefined;
    if (answer.status !== 200) return `status ${answer.status}: ${excerpt(answer.text)}`;
    const entry = entryIn(answer.text);
    return entry?.petId === first.petId && entry.quantity === first.quantity
      ? undefined
      : `unexpected body ${excerpt(answer.text)}`;
  },
};

export function failedChecks(results: readonly SmokeCheckResult[]): SmokeCheckResult[] {
  return results.filter((result) => result.problem !== undefined);
}

/** `fetch failed` says nothing: name the cause (ECONNREFUSED, ENOTFOUND, a certificate error, the time-out). */
function describeRequestError(error: unknown, timeoutMs: number): string {
  const failure = error as Error & { cause?: { code?: string; message?: string } };
  if (failure.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = failure.cause?.code ?? failure.cause?.message;
  return `no answer: ${failure.message}${cause ? ` (${cause})` : ''}`;
}

/** Undefined when the answer is the Error body with this status and code, else what is wrong. */
function expectError(answer: Answer, status: number, code: string): string | undefined {
  if (answer.status !== status) return `status ${answer.status} instead of ${status}: ${excerpt(answer.text)}`;
  try {
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    if (body.code !== code || body.status !== status || typeof body.message !== 'string')
      return `Error body ${excerpt(answer.text)}`;
  } catch {
    return `not a JSON Error body: ${excerpt(answer.text)}`;
  }
  return undefined;
}

/** The entry an answer's text is, as the API writes it (petId digits exact); undefined when it is not one. */
function entryIn(text: string): InventoryItem | undefined {
  const json = parsed(text);
  return json && readInventoryItem(json, json.value);
}

/** The page of at most one entry an answer's text is; undefined when it is not one. */
function onePage(text: string): { first?: InventoryItem } | undefined {
  const json = parsed(text);
  if (!json || !Array.isArray(json.value) || json.value.length > 1) return undefined;
  if (json.value.length === 0) return {};
  const first = readInventoryItem(json, json.value[0]);
  return first && { first };
}

function parsed(text: string): JsonWithLiterals | undefined {
  try {
    return parseJsonWithLiterals(text);
  } catch {
    return undefined;
  }
}

function excerpt(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
