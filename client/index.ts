/**
 * The typed client of the API: openapi-fetch over `client/schema.d.ts` (`npm run generate:client`), `petId` a `bigint`
 * since an int64 is beyond JSON.parse's exact range. Usage: docs/api.md, "The typed client".
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema';

/** Property names the contract declares `format: int64`; their values are read and typed as `bigint`. */
export const INT64_PROPERTIES: ReadonlySet<string> = new Set(['petId']);

/** int64 names: `petId` in bodies and paths, `after` (a petId) in the list's query. */
type Int64Property = 'petId' | 'after';

/** `T` with every int64 property (`petId`) typed `bigint` instead of `number`, at any depth. */
export type WithExactInt64<T> = T extends readonly (infer U)[]
  ? WithExactInt64<U>[]
  : T extends object
    ? {
        [K in keyof T]: K extends Int64Property
          ? NonNullable<T[K]> extends number
            ? bigint | Exclude<T[K], number>
            : WithExactInt64<T[K]>
          : WithExactInt64<T[K]>;
      }
    : T;

/**
 * The body of `PATCH /inventory/{petId}`: a set or an adjustment, never a mix (openapi-typescript writes the
 * contract's `oneOf` as a plain union, which would let a mix through).
 */
export type InventoryPatchBody =
  | (InventoryUpdate & { adjustBy?: never })
  | (InventoryAdjustment & { quantity?: never; expectedQuantity?: never });

/** An operation with its JSON request body replaced by `Body`. */
type WithJsonBody<Operation, Body> = Omit<Operation, 'requestBody'> & {
  requestBody: { content: { 'application/json': Body } };
};

/** One change of `POST /inventory/changes`: its pet, and exactly what a PATCH body may say. */
export type InventoryChangeBody = InventoryPatchBody & { petId: bigint };

type ExactPaths = WithExactInt64<paths>;
type EntryPath = '/inventory/{petId}';
type ChangesPath = '/inventory/changes';

/** The API's paths with exact int64 types, and each change (PATCH or batch) one of its two exclusive forms. */
export type InventoryPaths = Omit<ExactPaths, EntryPath | ChangesPath> & {
  [P in EntryPath]: Omit<ExactPaths[P], 'patch'> & { patch: WithJsonBody<ExactPaths[P]['patch'], InventoryPatchBody> };
} & {
  [P in ChangesPath]: Omit<ExactPaths[P], 'post'> & {
    post: WithJsonBody<ExactPaths[P]['post'], { changes: InventoryChangeBody[] }>;
  };
};
/** One stock entry as this client returns it (`petId` is a `bigint`). */
export type InventoryItem = WithExactInt64<components['schemas']['InventoryItem']>;
/** The body of `PATCH /inventory/{petId}` that sets the quantity (optionally compare-and-set). */
export type InventoryUpdate = components['schemas']['InventoryUpdate'];
/** The body of `PATCH /inventory/{petId}` that adjusts the quantity by a delta. */
export type InventoryAdjustment = components['schemas']['InventoryAdjustment'];
/** One change of a pet's stock, as `GET /inventory/{petId}/history` lists it. */
export type HistoryEntry = components['schemas']['HistoryEntry'];
export type PetStatus = components['schemas']['PetStatus'];
/**
 * One change as the feed (`GET /inventory/changes`) gives it: its history row, plus `id` (a string, the same wherever
 * the event appears: dedupe on it), `petId` and the entry's `version` after the change (apply an event only when its
 * version is above the one you hold). Typed here by hand after openapi.yaml's ChangeEvent.
 */
export type ChangeEvent = HistoryEntry & { id: string; petId: bigint; version: number };
/** The Error body of every non-2xx response. */
export type ApiError = components['schemas']['Error'];
/** The documented Error codes. */
export type ErrorCode = ApiError['code'];
/** The client `createInventoryClient` returns. */
export type InventoryClient = Client<InventoryPaths, 'application/json'>;

/** What JSON.parse passes a reviver in Node >= 21 and current browsers (source text access). */
interface ReviverContext {
  source?: string;
}

const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/;

/** Parses JSON with every int64 property read from its source text as a `bigint`; throws rather than round one. */
export function parseExactJson(text: string): unknown {
  return JSON.parse(text, function reviveInt64(key: string, value: unknown, context?: ReviverContext) {
    if (typeof value !== 'number' || !INT64_PROPERTIES.has(key)) return value;
    const source = context?.source;
    if (source !== undefined && INTEGER_LITERAL.test(source)) return BigInt(source);
    if (source === undefined && Number.isSafeInteger(value)) return BigInt(value);
    throw new Error(`${key} ${source ?? value} cannot be read exactly: this runtime's JSON.parse has no source text`);
  });
}

/** JSON.rawJSON (Node >= 21, current browsers): writes a bigint as a bare number with all its digits. */
const rawJson = (JSON as unknown as { rawJSON?: (text: string) => unknown }).rawJSON;

/** Serializes a request body; bigints are written as bare JSON numbers with all their digits. */
export function stringifyExactJson(body: unknown): string {
  return JSON.stringify(body, function writeBigInt(_key, value: unknown) {
    if (typeof value !== 'bigint') return value;
    if (!rawJson) throw new Error('This runtime cannot write a bigint to JSON exactly (no JSON.rawJSON)');
    return rawJson(value.toString());
  });
}

/** A Response whose `json()` keeps int64 values exact. openapi-fetch parses a success body through `json()`. */
function exactJsonResponse(text: string, init: ResponseInit): Response {
  const response = new Response(text, init);
  Object.defineProperty(response, 'json', {
    value: async function readExactJson() {
      return parseExactJson(text);
    },
  });
  return response;
}

/** Wraps `fetch` so that JSON bodies are read with `parseExactJson` (buffered, so openapi-fetch calls `json()`). */
export function exactJsonFetch(baseFetch: typeof fetch = globalThis.fetch): typeof fetch {
  return async function fetchExactJson(input, init) {
    const response = await baseFetch(input, init);
    const contentType = response.headers.get('content-type') ?? '';
    if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType) || response.status === 204) return response;
    const text = await response.text();
    const headers = new Headers(response.headers);
    headers.set('content-length', String(new TextEncoder().encode(text).byteLength));
    headers.delete('transfer-encoding');
    headers.delete('content-encoding');
    return exactJsonResponse(text, { status: response.status, statusText: response.statusText, headers });
  };
}

export interface InventoryClientOptions {
  /** The stage's base URL, ending in `/v1` (e.g. `http://127.0.0.1:3000/v1`); anything else is refused. */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/**
 * The base URL without trailing slashes; its path must end in `/v1`, else a stage answers API Gateway's own 403.
 * @throws TypeError when it does not.
 */
export function checkedBaseUrl(baseUrl: string): string {
  // A relative URL (`/v1`, a browser page served by the API's host) is checked by its path too.
  if (!/\/v1\/*$/.test(new URL(baseUrl, 'http://relative.invalid').pathname))
    throw new TypeError(
      `baseUrl must end in /v1, the stage's path (e.g. http://127.0.0.1:3000/v1, or the stack's ApiUrl output); got "${baseUrl}"`,
    );
  return baseUrl.replace(/\/+$/, '');
}

/** A typed client: each call resolves to `{ data }` or `{ error }` with `response`; network failures reject. */
export function createInventoryClient(options: InventoryClientOptions): InventoryClient {
  return createClient<InventoryPaths, 'application/json'>({
    baseUrl: checkedBaseUrl(options.baseUrl),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: exactJsonFetch(options.fetch),
    bodySerializer: stringifyExactJson,
  });
}

/** Whether an answer's body is the API's Error body (`{ code, message, status }`). */
export function isApiError(body: unknown): body is ApiError {
  const candidate = body as Partial<ApiError> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.code === 'string' &&
    typeof candidate.message === 'string'
  );
}

/** At most this many characters of a body that is not an Error body go into an InventoryApiError's message. */
const BODY_EXCERPT_LENGTH = 200;

/** A non-2xx answer met while reading pages: its status, and its Error body (`error`) when it is one. */
export class InventoryApiError extends Error {
  override readonly name = 'InventoryApiError';
  /** The Error body; undefined when the answer was something else. */
  readonly error: ApiError | undefined;
  /** From {@link inventoryPages}: the `after` to resume the list from (undefined: from its start). */
  after?: bigint;
  /**
   * From {@link inventoryHistoryPages}: the `cursor` to resume the history from (undefined: from the newest); from
   * {@link inventoryChangePages}: the feed's (undefined: from the oldest event kept).
   */
  cursor?: string;
  constructor(
    readonly body: unknown,
    readonly status: number,
  ) {
    const error = isApiError(body) ? body : undefined;
    super(error ? `${status} ${error.code}: ${error.message}` : `${status}, not an Error body: ${excerpt(body)}`);
    this.error = error;
  }
}

function excerpt(body: unknown): string {
  if (body === undefined || body === '') return '(no body)';
  const text =
    typeof body === 'string'
      ? body
      : JSON.stringify(body, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
  return text.length > BODY_EXCERPT_LENGTH ? `${text.slice(0, BODY_EXCERPT_LENGTH)}…` : text;
}

/** A `Link` header's target of relation `relation` (RFC 8288) and the link as written; undefined when there is none. */
function linkOf(link: string | null, relation = 'next'): { target: URL; written: string } | undefined {
  for (const value of link?.split(',') ?? []) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(value);
    // rel is a space-separated list of relation types, quoted or not (RFC 8288 §3.3): `rel="prev next"` is a next.
    const rel = /(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^\s;]+))/i.exec(match?.[2] ?? '');
    const types = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (match && types.includes(relation))
      return { target: new URL(match[1] ?? '', 'http://link.invalid'), written: value.trim() };
  }
  return undefined;
}

/** The `after` of a `Link` header's `rel="next"` target (RFC 8288); undefined when there is none. */
export function nextPageAfter(link: string | null): bigint | undefined {
  const next = linkOf(link);
  if (next === undefined) return undefined;
  const after = next.target.searchParams.get('after');
  // A next page this client cannot follow must not look like the last one: the list would seem complete.
  if (after === null || !/^-?[0-9]+$/.test(after))
    throw new Error(`GET /inventory answered a rel="next" link without an integer after: ${next.written}`);
  return BigInt(after);
}

/** The `cursor` of a history page's `rel="next"` link, as given (it is opaque); undefined on the last page. */
export function nextHistoryCursor(link: string | null): string | undefined {
  return linkCursor(link, 'next', 'GET /inventory/{petId}/history');
}

/**
 * The `cursor` of a link's target, as given (it is opaque). As with the list, a link that cannot be followed must not
 * end a history or feed as if it were complete. @throws Error when the link has no cursor
 */
function linkCursor(link: string | null, relation: string, route: string): string | undefined {
  const found = linkOf(link, relation);
  if (found === undefined) return undefined;
  const cursor = found.target.searchParams.get('cursor');
  if (!cursor) throw new Error(`${route} answered a rel="${relation}" link without a cursor: ${found.written}`);
  return cursor;
}

/** How often a page refused with 429 or 503 is asked for. */
const PAGE_ATTEMPTS = 4;
/** The longest it waits between those attempts, whatever `Retry-After` says. */
const MAX_RETRY_WAIT_MS = 30_000;

/** Milliseconds to wait for a `Retry-After` of delay-seconds (RFC 9110 §10.2.3): 1 s when absent or unreadable. */
function retryAfterMs(header: string | null): number {
  const seconds = header !== null && /^[0-9]+$/.test(header.trim()) ? Number(header.trim()) : 1;
  return Math.min(seconds * 1000, MAX_RETRY_WAIT_MS);
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A GET asked again after its `Retry-After` while it is refused with 429 or 503 (reads are safe to repeat). */
async function getRetrying<T extends { response: Response }>(
  get: () => Promise<T>,
  sleep: (ms: number) => Promise<void>,
): Promise<T> {
  let answer = await get();
  for (let attempt = 1; attempt < PAGE_ATTEMPTS && [429, 503].includes(answer.response.status); attempt++) {
    await sleep(retryAfterMs(answer.response.headers.get('retry-after')));
    answer = await get();
  }
  return answer;
}

/**
 * The list page by page, following `rel="next"` links; 429 and 503 are asked again after `Retry-After`. A failure
 * rejects with an error whose `after` is where to resume (pass it as `options.after`).
 */
export async function* inventoryPages(
  client: InventoryClient,
  options: { limit: number; after?: bigint; sleep?: (ms: number) => Promise<void> },
): AsyncGenerator<InventoryItem[]> {
  const sleep = options.sleep ?? wait;
  let after = options.after;
  for (;;) {
    const query = { limit: options.limit, ...(after === undefined ? {} : { after }) };
    const { data, error, response } = await getRetrying(() => client.GET('/inventory', { params: { query } }), sleep);
    if (error !== undefined || data === undefined) {
      const failure = new InventoryApiError(error, response.status);
      failure.after = after;
      throw failure;
    }
    yield data;
    try {
      after = nextPageAfter(response.headers.get('link'));
    } catch (error) {
      // Where to resume: after the last entry of the page just given.
      throw Object.assign(error as Error, { after: data.at(-1)?.petId ?? after });
    }
    if (after === undefined) return;
  }
}

/**
 * One pet's changes page by page, newest first, following `rel="next"` links; 429 and 503 are asked again after
 * `Retry-After`. A failure rejects with an error whose `cursor` is where to resume (pass it as `options.cursor`).
 */
export async function* inventoryHistoryPages(
  client: InventoryClient,
  petId: bigint,
  options: { limit?: number; cursor?: string; sleep?: (ms: number) => Promise<void> } = {},
): AsyncGenerator<HistoryEntry[]> {
  const sleep = options.sleep ?? wait;
  const limit = options.limit === undefined ? {} : { limit: options.limit };
  let cursor = options.cursor;
  for (;;) {
    const query = { ...limit, ...(cursor === undefined ? {} : { cursor }) };
    const { data, error, response } = await getRetrying(
      () => client.GET('/inventory/{petId}/history', { params: { path: { petId }, query } }),
      sleep,
    );
    if (error !== undefined || data === undefined) {
      const failure = new InventoryApiError(error, response.status);
      failure.cursor = cursor;
      throw failure;
    }
    yield data;
    cursor = nextHistoryCursor(response.headers.get('link'));
    if (cursor === undefined) return;
  }
}

/** The one operation of the feed, as openapi-typescript writes an operation, for the typed client's `GET`. */
interface ChangeFeedPaths {
  '/inventory/changes': {
    get: {
      parameters: { query?: { limit?: number; cursor?: string } };
      responses: {
        200: { headers: Record<string, unknown>; content: { 'application/json': { items: ChangeEvent[] } } };
        default: { headers: Record<string, unknown>; content: { 'application/json': ApiError } };
      };
    };
  };
}

/**
 * The feed position a `GET /inventory` answer names (its `Link` with `rel="changes"`): the position when the list
 * began. A new consumer lists, applies the entries, then follows from it with {@link inventoryChangePages}; a change
 * made while it listed may then arrive again, and its `version` shows it is already applied.
 */
export function listChangesCursor(link: string | null): string | undefined {
  return linkCursor(link, 'changes', 'GET /inventory');
}

/** One page of the feed: its events, oldest first, and the cursor to resume from once all of them are applied. */
export interface ChangePage {
  events: ChangeEvent[];
  /** Save it after applying the page's events; {@link inventoryChangePages} from it gives the events that follow. */
  cursor: string;
}

export interface ChangeFeedOptions {
  /** Where to start: a saved {@link ChangePage.cursor} or {@link listChangesCursor}. @default the oldest event kept */
  cursor?: string;
  /** Events per page, 1 to 1000. @default the API's, 100 */
  limit?: number;
  /** Keep asking after the feed is read to its end, every `pollIntervalMs`, until `signal` aborts. @default false */
  follow?: boolean;
  /** How long to wait after an empty page before asking again (with `follow`). @default 1000 */
  pollIntervalMs?: number;
  /** Ends the iteration (without an error), also in the middle of a request or a wait. */
  signal?: AbortSignal;
}

/** Resolves after `ms`, or at once when `signal` aborts; leaves no listener on `signal` (a follow pauses often). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const end = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', end);
      resolve();
    };
    const timer = setTimeout(end, ms);
    signal?.addEventListener('abort', end, { once: true });
  });
}

/**
 * The change feed page by page, oldest first, from `options.cursor`, each page with the cursor to save once its events
 * are applied. An empty page (also yielded, with the position to ask again from) ends it without `follow`; with
 * `follow`, it waits `pollIntervalMs` and asks again, until `signal` aborts. 429 and 503 are asked again after
 * `Retry-After`; another failure rejects with an {@link InventoryApiError} whose `cursor` is where to resume (410
 * `CURSOR_EXPIRED`: the cursor is older than the events kept; list again and follow from {@link listChangesCursor}).
 */
export async function* inventoryChangePages(
  client: InventoryClient,
  options: ChangeFeedOptions = {},
): AsyncGenerator<ChangePage> {
  const { limit, follow = false, pollIntervalMs = 1000, signal } = options;
  const feed = client as unknown as Client<ChangeFeedPaths, 'application/json'>;
  let cursor = options.cursor;
  while (!signal?.aborted) {
    const query = { ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) };
    const answer = await getRetrying(
      () => feed.GET('/inventory/changes', { params: { query }, signal }),
      (ms) => pause(ms, signal),
    ).catch((error: unknown) => {
      if (signal?.aborted) return undefined;
      throw error;
    });
    if (answer === undefined) return;
    const { data, error, response } = answer;
    if (data === undefined) throw Object.assign(new InventoryApiError(error, response.status), { cursor });
    const next = linkCursor(response.headers.get('link'), 'next', 'GET /inventory/changes');
    // The feed always names where to ask next; without it, following on would read the feed again from its start.
    if (next === undefined) throw new Error('GET /inventory/changes answered without a rel="next" link');
    yield { events: data.items, cursor: next };
    if (data.items.length === 0) {
      if (!follow) return;
      await pause(pollIntervalMs, signal);
    }
    cursor = next;
  }
}

/**
 * `POST /inventory/changes`, all or none: the entries as stored, in order; an `idempotencyKey` (a fresh UUID per
 * batch) makes a resend safe. @throws InventoryApiError with the first failing change's Error body
 */
export async function applyInventoryChanges(
  client: InventoryClient,
  changes: readonly InventoryChangeBody[],
  options: { idempotencyKey?: string } = {},
): Promise<InventoryItem[]> {
  const header = options.idempotencyKey === undefined ? undefined : { 'Idempotency-Key': options.idempotencyKey };
  const { data, error, response } = await client.POST('/inventory/changes', {
    params: { header },
    body: { changes: [...changes] },
  });
  if (error !== undefined || data === undefined) throw new InventoryApiError(error, response.status);
  return data.items;
}
