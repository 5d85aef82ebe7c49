import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { parse } from 'yaml';
import {
  applyInventoryChanges,
  createInventoryClient,
  INT64_PROPERTIES,
  InventoryApiError,
  inventoryHistoryPages,
  inventoryPages,
  nextHistoryCursor,
  nextPageAfter,
  parseExactJson,
  stringifyExactJson,
} from '../../client/index';
import { EXACT_JSON_SCRIPT, localizeContract } from '../../local/docs';
import { loadContract, OPENAPI_PATH } from '../helpers/contract';

const ROOT = join(import.meta.dirname, '..', '..');

/** Property names the contract declares `format: int64`, at any depth of its schemas. */
function int64Properties(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) int64Properties(item, found);
  else if (node && typeof node === 'object') {
    for (const [name, value] of Object.entries(node as Record<string, unknown>)) {
      if (name === 'properties' && value && typeof value === 'object') {
        for (const [property, schema] of Object.entries(value as Record<string, { format?: string }>)) {
          if (schema?.format === 'int64') found.add(property);
        }
      }
      int64Properties(value, found);
    }
  }
  return found;
}

const json = (body: string, status = 200, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'Content-Type': 'application/json', ...headers } });

/**
 * A client whose fetch records each request and answers it with the next of `answers`, or with a fresh
 * `answers()` every time (a body can be read once).
 */
function aClient(answers: Response[] | (() => Response), baseUrl = 'http://api.test/v1') {
  const seen: Request[] = [];
  const client = createInventoryClient({
    baseUrl,
    apiKey: 'psk_k',
    fetch: async (input: Parameters<typeof fetch>[0]) => {
      seen.push(input as Request);
      if (typeof answers === 'function') return answers();
      const answer = answers.shift();
      if (answer === undefined) throw new Error(`fetch call ${seen.length} has no answer left`);
      return answer;
    },
  });
  return { client, seen };
}

describe('Client: generated types and exact int64', () => {
  it('has client/schema.d.ts generated from the current openapi.yaml', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'petstore-client-'));
    try {
      // Act
      const result = spawnSync(
        join(ROOT, 'node_modules', '.bin', 'openapi-typescript'),
        [OPENAPI_PATH, '-o', join(dir, 'schema.d.ts')],
        { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
      );
      // Assess
      expect(result.status).toBe(0);
      const fresh = readFileSync(join(dir, 'schema.d.ts'), 'utf8');
      const committed = readFileSync(join(ROOT, 'client', 'schema.d.ts'), 'utf8');
      if (fresh !== committed) throw new Error('client/schema.d.ts is stale: run npm run generate:client');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads as bigint exactly the properties the contract declares int64', () => {
    // Assess
    expect([...INT64_PROPERTIES].sort()).toEqual([...int64Properties(loadContract().components)].sort());
  });

  it('parses every petId from its digits, beyond 2^53 and at both int64 extremes', () => {
    // Act
    const items = parseExactJson(
      '[{"petId":9223372036854775807,"quantity":2,"status":"pending"},{"petId":-9223372036854775808,"quantity":0,"status":"sold"},{"petId":9007199254740993,"quantity":1,"status":"sold"}]',
    ) as { petId: bigint; quantity: number }[];
    // Assess
    expect(items.map((item) => item.petId)).toEqual([9223372036854775807n, -9223372036854775808n, 9007199254740993n]);
    expect(items[0]?.quantity).toBe(2);
  });

  it('writes bigints as bare JSON numbers with all their digits', () => {
    // Act & Assess
    expect(stringifyExactJson({ petId: 9223372036854775807n, quantity: 1 })).toBe(
      '{"petId":9223372036854775807,"quantity":1}',
    );
  });

  it('sends expectedQuantity and returns a 409 as a typed CONFLICT error (compare-and-set)', async () => {
    // Prepare
    const { client, seen } = aClient([
      json(
        '{"code":"CONFLICT","message":"The stored quantity of petId 7 is 14, not the expected 12; nothing was changed.","status":409}',
        409,
      ),
    ]);
    // Act
    const { data, error, response } = await client.PATCH('/inventory/{petId}', {
      params: { path: { petId: 7n } },
      body: { quantity: 15, expectedQuantity: 12 },
    });
    // Assess
    expect(await seen[0]?.text()).toBe('{"quantity":15,"expectedQuantity":12}');
    expect(response.status).toBe(409);
    expect(data).toBeUndefined();
    const code: 'CONFLICT' | undefined = error?.code === 'CONFLICT' ? error.code : undefined;
    expect(code).toBe('CONFLICT');
  });
});

describe('Client: what it refuses before sending, and what it says of an answer that is not an Error body', () => {
  it('types the PATCH body as a set or an adjustment, never a mix of the two (the server answers a mix 400)', async () => {
    // Prepare
    const { client, seen } = aClient(() => json('{"petId":7,"quantity":3,"status":"available"}'));
    const path = { params: { path: { petId: 7n } } };
    // Act: tsc (npm run typecheck) checks the @ts-expect-error lines; a line that type-checks fails it.
    await client.PATCH('/inventory/{petId}', { ...path, body: { quantity: 3 } });
    await client.PATCH('/inventory/{petId}', { ...path, body: { quantity: 3, expectedQuantity: 2 } });
    await client.PATCH('/inventory/{petId}', { ...path, body: { adjustBy: -1 } });
    // @ts-expect-error a set and an adjustment in one body
    await client.PATCH('/inventory/{petId}', { ...path, body: { quantity: 1, adjustBy: 2 } });
    // @ts-expect-error compare-and-set applies to a set only
    await client.PATCH('/inventory/{petId}', { ...path, body: { adjustBy: 2, expectedQuantity: 3 } });
    // @ts-expect-error an adjustment needs adjustBy
    await client.PATCH('/inventory/{petId}', { ...path, body: { expectedQuantity: 3 } });
    // Assess: the types refuse, the client itself sends what it is given
    expect(await Promise.all(seen.map((request) => request.text()))).toEqual([
      '{"quantity":3}',
      '{"quantity":3,"expectedQuantity":2}',
      '{"adjustBy":-1}',
      '{"quantity":1,"adjustBy":2}',
      '{"adjustBy":2,"expectedQuantity":3}',
      '{"expectedQuantity":3}',
    ]);
  });

  it.each(['http://api.test/v1', 'http://api.test/v1/', 'https://api.example.test/v1//'])(
    'takes the base URL %s, which ends in /v1',
    async (baseUrl) => {
      const { client, seen } = aClient([json('[]')], baseUrl);
      await client.GET('/inventory');
      expect(new URL(seen[0]?.url ?? '').pathname).toBe('/v1/inventory');
    },
  );

  it('takes a relative base URL ending in /v1 (a page served by the API host)', () => {
    expect(() => createInventoryClient({ baseUrl: '/v1', apiKey: 'psk_k' })).not.toThrow();
  });

  it.each(['http://api.test', 'http://api.test/', 'http://api.test/v1/inventory', 'http://api.test/v10', '/'])(
    'refuses the base URL %s at creation: a stage answers a path without /v1 with its own 403',
    (baseUrl) => {
      expect(() => createInventoryClient({ baseUrl, apiKey: 'psk_k' })).toThrow(TypeError);
      expect(() => createInventoryClient({ baseUrl, apiKey: 'psk_k' })).toThrow(/^baseUrl must end in \/v1/);
    },
  );

  it("says what came back when a page's answer is not an Error body (API Gateway's own 403)", async () => {
    const { client } = aClient([json('{"message":"Forbidden"}', 403)]);
    const failure = inventoryPages(client, { limit: 10 }).next();
    await expect(failure).rejects.toThrow(new InventoryApiError({ message: 'Forbidden' }, 403));
    await expect(failure).rejects.toMatchObject({
      message: '403, not an Error body: {"message":"Forbidden"}',
      status: 403,
      error: undefined,
      body: { message: 'Forbidden' },
    });
  });

  it('asks again for a page refused with 429 or 503 after its Retry-After, and goes on to the next page', async () => {
    // Prepare: a 429 (Retry-After: 2), a 503, then the page, then the last page.
    const { client } = aClient([
      json('{"code":"THROTTLED","message":"slow down","status":429}', 429, { 'Retry-After': '2' }),
      json('{"code":"SERVICE_UNAVAILABLE","message":"later","status":503}', 503),
      json('[{"petId":1,"quantity":2,"status":"available"}]', 200, {
        Link: '</v1/inventory?limit=1&after=1>; rel="next"',
      }),
      json('[]'),
    ]);
    const waits: number[] = [];
    // Act
    const pages: unknown[] = [];
    for await (const page of inventoryPages(client, { limit: 1, sleep: async (ms) => void waits.push(ms) })) {
      pages.push(page);
    }
    // Assess
    expect(pages).toEqual([[{ petId: 1n, quantity: 2, status: 'available' }], []]);
    expect(waits).toEqual([2000, 1000]);
  });

  it('gives up after 4 refusals with an error saying where to resume (after)', async () => {
    const { client, seen } = aClient(() =>
      json('{"code":"THROTTLED","message":"slow down","status":429}', 429, { 'Retry-After': '1' }),
    );
    const failure = inventoryPages(client, { limit: 5, after: 41n, sleep: async () => undefined }).next();
    await expect(failure).rejects.toMatchObject({ status: 429, after: 41n, error: { code: 'THROTTLED' } });
    expect(seen).toHaveLength(4);
  });

  it.each([
    ['<https://api.test/v1/inventory?limit=2&after=7>; rel="next"', 7n],
    ['</v1/inventory?limit=2&after=-9223372036854775808>; rel=next', -9223372036854775808n],
    ['</v1/inventory?after=5>; rel="prev next"', 5n],
    ['</v1/inventory?after=007>; rel="next"', 7n],
    ['</v1/inventory?after=1>; rel="prev"', undefined],
    [null, undefined],
  ])('reads the next page of the Link %s as after=%s (RFC 8288: rel is a list of types)', (link, after) => {
    expect(nextPageAfter(link)).toBe(after);
  });

  it('throws on a rel="next" link it cannot follow, rather than end the list as if complete', async () => {
    expect(() => nextPageAfter('</v1/inventory?limit=2>; rel="next"')).toThrow(
      /rel="next" link without an integer after/,
    );
    // Through the pages: the error says where to resume, after the last entry given.
    const { client } = aClient([
      json('[{"petId":9007199254740993,"quantity":2,"status":"available"}]', 200, {
        Link: '</v1/inventory?limit=1>; rel="next"',
      }),
    ]);
    const pages = inventoryPages(client, { limit: 1 });
    await pages.next();
    await expect(pages.next()).rejects.toMatchObject({ after: 9007199254740993n });
  });

  it('shows the start of a long answer that is not JSON, and says when there was no body', async () => {
    const page = `<html>${'x'.repeat(500)}</html>`;
    const { client } = aClient([new Response(page, { status: 502, headers: { 'Content-Type': 'text/html' } })]);
    const html502 = inventoryPages(client, { limit: 10 }).next();
    await expect(html502).rejects.toThrow(`502, not an Error body: ${page.slice(0, 200)}…`);
    expect(new InventoryApiError(undefined, 504).message).toBe('504, not an Error body: (no body)');
  });

  it('keeps the Error body and its code in the message when the answer is one', () => {
    const error = new InventoryApiError(
      { code: 'VALIDATION_FAILED', message: 'limit must be 1 to 10000; got 20000', status: 400 },
      400,
    );
    expect(error.message).toBe('400 VALIDATION_FAILED: limit must be 1 to 10000; got 20000');
    expect(error.error?.code).toBe('VALIDATION_FAILED');
  });
});

describe('Client: the batch of changes and the history of a pet', () => {
  const historyEntry = (quantity: number, reason: string | null) => ({
    at: '2026-11-28T10:15:02.114Z',
    source: 'api',
    actor: 'key_1',
    requestId: 'r',
    quantity,
    previousQuantity: quantity - 1,
    adjustBy: 1,
    status: 'available',
    previousStatus: 'available',
    reason,
    reference: null,
  });

  it('sends no Idempotency-Key unless given one, and types each change as a set or an adjustment, never a mix', async () => {
    // Prepare
    const { client, seen } = aClient([json('{"items":[]}'), json('{"items":[]}')]);
    // Act: tsc (npm run typecheck) checks the @ts-expect-error line; a line that type-checks fails it.
    await applyInventoryChanges(client, [{ petId: 1n, adjustBy: -1 }]);
    // @ts-expect-error a set and an adjustment in one change
    await applyInventoryChanges(client, [{ petId: 1n, quantity: 1, adjustBy: 2 }]);
    // Assess
    expect(seen[0]?.headers.has('idempotency-key')).toBe(false);
    expect(await seen[1]?.text()).toBe('{"changes":[{"petId":1,"quantity":1,"adjustBy":2}]}');
  });

  it('reads the history newest first page by page, following the cursor of rel="next" and retrying a 429', async () => {
    // Prepare: a page with a next link, a 429, then the last page.
    const { client, seen } = aClient([
      json(JSON.stringify([historyEntry(3, 'received')]), 200, {
        Link: '</v1/inventory/9223372036854775807/history?limit=1&cursor=QUJD%2BZA%3D%3D>; rel="next"',
      }),
      json('{"code":"THROTTLED","message":"slow down","status":429}', 429, { 'Retry-After': '3' }),
      json(JSON.stringify([historyEntry(2, null)])),
    ]);
    const waits: number[] = [];
    // Act
    const pages: unknown[] = [];
    for await (const page of inventoryHistoryPages(client, 9223372036854775807n, {
      limit: 1,
      sleep: async (ms) => void waits.push(ms),
    }))
      pages.push(page);
    // Assess
    expect(pages).toEqual([[historyEntry(3, 'received')], [historyEntry(2, null)]]);
    expect(seen.map((request) => new URL(request.url).pathname)).toEqual(
      Array(3).fill('/v1/inventory/9223372036854775807/history'),
    );
    expect(seen.map((request) => new URL(request.url).searchParams.get('cursor'))).toEqual([
      null,
      'QUJD+ZA==',
      'QUJD+ZA==',
    ]);
    expect(new URL(seen[0]?.url ?? '').searchParams.get('limit')).toBe('1');
    expect(waits).toEqual([3000]);
  });

  it('asks for the API default page size when given no limit, and rejects with the cursor to resume from', async () => {
    const { client, seen } = aClient([
      json('[]', 200, { Link: '</v1/inventory/7/history?cursor=Zm9v>; rel="next"' }),
      json('{"code":"NOT_FOUND","message":"No inventory entry for petId 7.","status":404}', 404),
    ]);
    const pages = inventoryHistoryPages(client, 7n);
    await pages.next();
    await expect(pages.next()).rejects.toMatchObject({ status: 404, cursor: 'Zm9v', error: { code: 'NOT_FOUND' } });
    expect(new URL(seen[0]?.url ?? '').search).toBe('');
  });

  it.each([
    ['</v1/inventory/7/history?limit=2&cursor=YWJj>; rel="next"', 'YWJj'],
    ['</v1/inventory/7/history?cursor=YWJj>; rel="prev next"', 'YWJj'],
    ['</v1/inventory/7/history?cursor=YWJj>; rel="prev"', undefined],
    [null, undefined],
  ])('reads the cursor of the history Link %s as %s', (link, cursor) => {
    expect(nextHistoryCursor(link)).toBe(cursor);
  });

  it('throws on a history rel="next" link without a cursor, rather than end the history as if complete', () => {
    expect(() => nextHistoryCursor('</v1/inventory/7/history?limit=2>; rel="next"')).toThrow(
      /rel="next" link without a cursor/,
    );
  });
});

describe('Docs page: local contract and exact JSON display', () => {
  it('puts the local server first as /v1 (resolved against the page), and leaves the other servers as they are', () => {
    // Prepare
    const text = readFileSync(OPENAPI_PATH, 'utf8');
    // Act
    const localized = localizeContract(text);
    // Assess
    const servers = (parse(localized) as { servers: { url: string; variables?: unknown }[] }).servers;
    expect(servers[0]).toMatchObject({ url: '/v1' });
    expect(servers[0]?.variables).toBeUndefined();
    expect(servers.slice(1)).toEqual((loadContract().servers as unknown[]).slice(0, 2));
    expect(localized.length).toBeGreaterThan(text.length - 300);
  });

  it('makes JSON.parse + JSON.stringify keep integers beyond 2^53 on the page, and nothing else', () => {
    // Prepare
    const page = {
      JSON: { parse: JSON.parse, stringify: JSON.stringify, rawJSON: (JSON as { rawJSON?: unknown }).rawJSON },
    };
    const sandbox = { globalThis: page, Number };
    // Act
    runInNewContext(EXACT_JSON_SCRIPT, sandbox);
    const text = '[{"petId":9223372036854775807,"quantity":2,"ratio":0.5}]';
    const roundTrip = page.JSON.stringify(page.JSON.parse(text));
    // Assess
    expect(roundTrip).toBe(text);
    expect(page.JSON.parse('{"a":1}', (_key: string, value: unknown) => value)).toEqual({ a: 1 });
  });
});
