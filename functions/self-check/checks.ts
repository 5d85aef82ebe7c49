// The deploy checks: a client's requests and what a working deployment answers. The self-check and the CLI's `smoke`
// send them through the API; the pre-traffic hook sends each to the new version of the function (or the authorizer)
// that would serve it, before that version takes traffic.

import { randomBytes } from 'node:crypto';
import { API_KEY_PREFIX, type ApiKeyScope } from '../api-keys/key';
import { readInventoryItem } from '../inventory/json';
import { type JsonWithLiterals, parseJsonWithLiterals } from '../inventory/json-literals';
import { MAX_QUANTITY, MIN_PET_ID } from '../inventory/types';

/** Milliseconds each request may take: room for the cold start of the function it reaches. */
const CHECK_REQUEST_TIMEOUT_MS = 10_000;

/** Milliseconds the list's page of one entry may take: a cold start, the authorizer and a paced Query. */
const CHECK_LIST_TIMEOUT_MS = 30_000;

/** A pet no import creates in practice (the smallest int64): the checks' writes change it only if it has this stock. */
export const PROBE_PET_ID = String(MIN_PET_ID);

/** A compare-and-set that applies only if the pet exists with {@link MAX_QUANTITY}: it then rewrites that stock. */
const UNCHANGING_SET = `"quantity":${MAX_QUANTITY},"expectedQuantity":${MAX_QUANTITY}`;

/** The key a check sends: none, one nobody holds, or a key of a scope. */
export type CheckKey = 'none' | 'unknown' | ApiKeyScope;

/** One request of a check, relative to the API's `/v1` base. */
export interface CheckRequest {
  method: string;
  path: string;
  query?: Record<string, string>;
  key: CheckKey;
  body?: string;
}

/** An answer, from API Gateway or from a function invoked directly. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** A check: what is wrong with the answer to its request, undefined when it is what a working deployment gives. */
export interface Check {
  name: string;
  request: CheckRequest;
  verify(answer: Answer): string | undefined;
  /** Milliseconds the request may take. @default {@link CHECK_REQUEST_TIMEOUT_MS} */
  timeoutMs?: number;
}

/**
 * Whether a key of `scope` may call `method`, as docs/api.md documents the authorizer's policy: a write key every
 * route, a read key the GET routes.
 */
export function documentedAllow(scope: ApiKeyScope, method: string): boolean {
  return scope === 'write' || method === 'GET';
}

/** Every check, in running order. */
export const CHECKS: readonly Check[] = [
  {
    name: 'GET /inventory without a key answers 401 UNAUTHORIZED with WWW-Authenticate',
    request: { method: 'GET', path: '/inventory', key: 'none' },
    verify: (answer) =>
      expectError(answer, 401, 'UNAUTHORIZED') ??
      (answer.headers.get('www-authenticate') === 'Bearer' ? undefined : 'no WWW-Authenticate: Bearer'),
  },
  {
    name: 'GET /inventory with a key nobody holds answers 401 UNAUTHORIZED (the authorizer refuses it)',
    request: { method: 'GET', path: '/inventory', key: 'unknown' },
    verify: (answer) => expectError(answer, 401, 'UNAUTHORIZED'),
  },
  {
    name: 'GET /inventory?limit=1 with a write key answers 200 and a JSON array of at most one {petId, quantity, status}',
    request: { method: 'GET', path: '/inventory', query: { limit: '1' }, key: 'write' },
    verify: verifyListPage,
    timeoutMs: CHECK_LIST_TIMEOUT_MS,
  },
  {
    name: `GET /inventory/${PROBE_PET_ID} with a read key answers 404 NOT_FOUND, or 200 with that pet`,
    request: { method: 'GET', path: `/inventory/${PROBE_PET_ID}`, key: 'read' },
    verify: (answer) => expectEntryOrAbsent(answer),
  },
  {
    name: `PATCH /inventory/${PROBE_PET_ID} with a read key answers 403 ACCESS_DENIED`,
    request: { method: 'PATCH', path: `/inventory/${PROBE_PET_ID}`, key: 'read', body: `{${UNCHANGING_SET}}` },
    verify: (answer) => expectError(answer, 403, 'ACCESS_DENIED'),
  },
  {
    name: `PATCH /inventory/${PROBE_PET_ID} (a compare-and-set that changes nothing) answers 404 NOT_FOUND or 409 CONFLICT`,
    request: { method: 'PATCH', path: `/inventory/${PROBE_PET_ID}`, key: 'write', body: `{${UNCHANGING_SET}}` },
    verify: (answer) => expectUnchangingWrite(answer, (json) => json.value),
  },
  {
    name: 'PATCH with a negative quantity answers 400 VALIDATION_FAILED and writes nothing',
    request: { method: 'PATCH', path: '/inventory/1', key: 'write', body: '{"quantity":-1}' },
    verify: (answer) => expectError(answer, 400, 'VALIDATION_FAILED'),
  },
  {
    name: `POST /inventory/changes of pet ${PROBE_PET_ID} (a compare-and-set that changes nothing) answers 404 or 409`,
    request: {
      method: 'POST',
      path: '/inventory/changes',
      key: 'write',
      body: `{"changes":[{"petId":${PROBE_PET_ID},${UNCHANGING_SET}}]}`,
    },
    verify: (answer) => expectUnchangingWrite(answer, (json) => (json.value as { items?: unknown[] }).items?.[0]),
  },
  {
    name: `GET /inventory/${PROBE_PET_ID}/history answers 404 NOT_FOUND, or 200`,
    request: { method: 'GET', path: `/inventory/${PROBE_PET_ID}/history`, key: 'write' },
    verify: (answer) =>
      answer.status !== 200
        ? expectError(answer, 404, 'NOT_FOUND')
        : Array.isArray(parsed(answer.text)?.value)
          ? undefined
          : `the body is not an array of changes: ${excerpt(answer.text)}`,
  },
  {
    name: `GET /pets/${PROBE_PET_ID} answers 501 NOT_IMPLEMENTED`,
    request: { method: 'GET', path: `/pets/${PROBE_PET_ID}`, key: 'write' },
    verify: (answer) => expectError(answer, 501, 'NOT_IMPLEMENTED'),
  },
  {
    name: 'GET /store/orders answers 501 NOT_IMPLEMENTED',
    request: { method: 'GET', path: '/store/orders', key: 'write' },
    verify: (answer) => expectError(answer, 501, 'NOT_IMPLEMENTED'),
  },
  {
    name: 'an unknown path answers 404 NOT_FOUND (API Gateway)',
    request: { method: 'GET', path: '/no-such-route', key: 'write' },
    verify: (answer) => expectError(answer, 404, 'NOT_FOUND'),
  },
  {
    name: 'DELETE /inventory answers 405 METHOD_NOT_ALLOWED with Allow: GET (API Gateway)',
    request: { method: 'DELETE', path: '/inventory', key: 'write' },
    verify: (answer) =>
      expectError(answer, 405, 'METHOD_NOT_ALLOWED') ??
      (answer.headers.get('allow') === 'GET' ? undefined : 'no Allow: GET'),
  },
];

/** The longest one run can take, every request taking its whole time-out. */
export function worstCheckRunMs(): number {
  return CHECKS.reduce((sum, check) => sum + (check.timeoutMs ?? CHECK_REQUEST_TIMEOUT_MS), 0);
}

/** The outcome of one check: passed when `problem` is undefined. */
export interface CheckResult {
  name: string;
  /** What was wrong, with no key in it. */
  problem?: string;
}

/** A key nobody holds, of the shape the authorizer accepts for a lookup. */
export function unknownKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The headers of a check's request: its key, JSON for a body, and a fresh Idempotency-Key for a write. */
export function requestHeaders(request: CheckRequest, key: string | undefined): Record<string, string> {
  return {
    ...(key === undefined ? {} : { Authorization: `Bearer ${key}` }),
    ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...(request.method === 'GET' ? {} : { 'Idempotency-Key': `deploy-check-${randomBytes(8).toString('hex')}` }),
  };
}

export interface ApiCheckOptions {
  /** The API's base URL, ending in `/v1` (a trailing slash is ignored). */
  baseUrl: string;
  /** The keys the checks send, by scope; the checks of a scope without a key are not run. Never reported. */
  keys: Partial<Record<ApiKeyScope, string>>;
  /** Called after each check, in order, for callers that report as they go. @default none */
  onResult?: (result: CheckResult) => void;
}

/** Sends every check through the API, one after the other, and returns their outcomes. */
export async function runApiChecks(options: ApiCheckOptions): Promise<CheckResult[]> {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const keys: Partial<Record<CheckKey, string>> = { ...options.keys, unknown: unknownKey() };
  const secrets = Object.values(keys).filter((key) => key.length > 0);
  // A broken target might echo the request back: the keys are taken out of every answer before it is read, so no
  // problem reported (and no log line or CloudFormation event made of it) can carry one.
  const redact = (text: string) => secrets.reduce((out, key) => out.replaceAll(key, '<the key>'), text);
  const results: CheckResult[] = [];
  for (const check of CHECKS) {
    const { request } = check;
    const key = keys[request.key];
    if (request.key !== 'none' && key === undefined) continue;
    const timeoutMs = check.timeoutMs ?? CHECK_REQUEST_TIMEOUT_MS;
    let problem: string | undefined;
    try {
      const query = request.query ? `?${new URLSearchParams(request.query)}` : '';
      const response = await fetch(`${baseUrl}${request.path}${query}`, {
        method: request.method,
        headers: requestHeaders(request, key),
        body: request.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      problem = check.verify({ status: response.status, headers: response.headers, text: await response.text() });
    } catch (error) {
      problem = describeRequestError(error, timeoutMs);
    }
    const result = problem === undefined ? { name: check.name } : { name: check.name, problem: redact(problem) };
    results.push(result);
    options.onResult?.(result);
  }
  return results;
}

export function failedChecks(results: readonly CheckResult[]): CheckResult[] {
  return results.filter((result) => result.problem !== undefined);
}

/** `fetch failed` says nothing: name the cause (ECONNREFUSED, ENOTFOUND, a certificate error, the time-out). */
function describeRequestError(error: unknown, timeoutMs: number): string {
  const failure = error as Error & { cause?: { code?: string; message?: string } };
  if (failure.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = failure.cause?.code ?? failure.cause?.message;
  return `no answer: ${failure.message}${cause ? ` (${cause})` : ''}`;
}

/** A page of at most one entry, not to be stored: read whole, whatever the store's size. */
function verifyListPage(answer: Answer): string | undefined {
  if (answer.status !== 200) return `status ${answer.status}: ${excerpt(answer.text)}`;
  if (answer.headers.get('cache-control') !== 'no-store') return 'no Cache-Control: no-store';
  const json = parsed(answer.text);
  const page = json?.value;
  const valid =
    Array.isArray(page) && page.length <= 1 && page.every((entry) => json && readInventoryItem(json, entry));
  return valid ? undefined : `the body is not an array of at most one InventoryItem: ${excerpt(answer.text)}`;
}

/** 404 for the probe pet, or 200 with its entry (an operator may have imported it). */
function expectEntryOrAbsent(answer: Answer): string | undefined {
  if (answer.status !== 200) return expectError(answer, 404, 'NOT_FOUND');
  const json = parsed(answer.text);
  return json && readInventoryItem(json, json.value)?.petId === PROBE_PET_ID
    ? undefined
    : `unexpected body ${excerpt(answer.text)}`;
}

/**
 * A write that changes nothing: 404 (no entry: a write never creates one), 409 (another stock), or 200 with the probe
 * pet's entry at the stock it already had (`entryOf` finds it in the answer).
 */
function expectUnchangingWrite(answer: Answer, entryOf: (json: JsonWithLiterals) => unknown): string | undefined {
  if (answer.status === 409) return expectError(answer, 409, 'CONFLICT');
  if (answer.status !== 200) return expectError(answer, 404, 'NOT_FOUND');
  const json = parsed(answer.text);
  const entry = json && readInventoryItem(json, entryOf(json));
  return entry?.petId === PROBE_PET_ID && entry.quantity === MAX_QUANTITY
    ? undefined
    : `unexpected body ${excerpt(answer.text)}`;
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
