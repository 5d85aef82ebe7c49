import { generateApiKey } from '../../functions/api-keys/key';
import { createHandler as createAuthorizer } from '../../functions/handlers/authorizer';
import { deprecationHeaders, handler as getPet } from '../../functions/handlers/get-pet';
import { createHandler as createList, ENTRIES_PER_CHUNK } from '../../functions/handlers/list-inventory';
import { createHandler as createUpdate } from '../../functions/handlers/update-inventory';
import { StorageUnavailableError } from '../../functions/inventory/errors';
import { encodeFeedCursor, FEED_START } from '../../functions/inventory/feed-query';
import { inventoryItemJson } from '../../functions/inventory/json';
import type { InventoryRepository } from '../../functions/inventory/repository';
import type { InventoryItem } from '../../functions/inventory/types';
import { defaultDimensions, logger } from '../../functions/observability/logger';
import { metrics } from '../../functions/observability/metrics';
import { SETTLE_MS } from '../../functions/store/history-table';
import { invokeStreamingHandler } from '../../local/lambda/streaming';
import { METRIC_NAMES } from '../../service/metric-names';
import { ROUTES } from '../../service/routes';
import {
  aFeedAt,
  aLambdaContext,
  anApiGatewayEvent,
  anInventoryItem,
  InMemoryApiKeyRepository,
  InMemoryInventoryRepository,
} from '../fixtures/builders';
import {
  callStreaming,
  entriesBreakingAt,
  listHeldAfterFirstBatch,
  listOnlyRepository,
  parsesAsJson,
} from '../helpers/streaming';

function body(result: { body: string }): Record<string, unknown> {
  return JSON.parse(result.body) as Record<string, unknown>;
}

/**
 * Records the metric names the function adds and its ERROR log lines, for the tests of the describe block that calls
 * it, and puts the real metrics and logger back after each.
 */
function captureMetricsAndErrors(): { added: string[]; errorLogs: unknown[][] } {
  const captured = { added: [] as string[], errorLogs: [] as unknown[][] };
  const addMetric = metrics.addMetric;
  const publish = metrics.publishStoredMetrics;
  const logError = logger.error;
  beforeEach(() => {
    captured.added.length = 0;
    captured.errorLogs.length = 0;
    metrics.addMetric = (name) => {
      captured.added.push(name);
      return metrics;
    };
    metrics.publishStoredMetrics = () => metrics;
    logger.error = (...args: unknown[]) => {
      captured.errorLogs.push(args);
    };
  });
  afterEach(() => {
    metrics.addMetric = addMetric;
    metrics.publishStoredMetrics = publish;
    logger.error = logError;
  });
  return captured;
}

/**
 * Lambda stops a function at its time-out, whatever it is doing ("Configure Lambda function timeout",
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html). middy stops the handler EARLY_TIMEOUT_MS
 * before it, and the whole error path must fit in that margin for the client to get the function's own 503 (and the
 * operators its log line and metric) instead of a time-out, a Lambda error.
 */
describe('Function: updateInventory, storage that never answers', () => {
  const { added, errorLogs } = captureMetricsAndErrors();

  it('answers its own 503 before its deadline even when its error path takes 50 ms (a cold, traced first failure)', async () => {
    // Prepare: a write that never returns, 1.5 s left in the invocation, and an error log that costs 50 ms.
    const hanging: InventoryRepository = {
      list: async function* () {},
      get: () => new Promise(() => undefined),
      applyChange: () => new Promise(() => undefined),
      applyChanges: () => new Promise(() => undefined),
    };
    const handler = createUpdate({ repository: hanging, idempotent: (_request, _context, operation) => operation() });
    const deadlineMs = 1500;
    const started = Date.now();
    const context = { ...aLambdaContext(), getRemainingTimeInMillis: () => deadlineMs - (Date.now() - started) };
    const logError = logger.error;
    logger.error = (...args: Parameters<typeof logger.error>) => {
      const until = Date.now() + 50;
      while (Date.now() < until);
      logError.apply(logger, args);
    };

    // Act
    const result = await handler(anApiGatewayEvent(), context).finally(() => {
      logger.error = logError;
    });
    const answeredAfterMs = Date.now() - started;

    // Assess: answered before Lambda would have stopped it (a race with a timer cannot tell: the slow error path
    // blocks the event loop, as it would on Lambda, whose deadline does not wait for it).
    expect(answeredAfterMs).toBeLessThan(deadlineMs);
    expect(result.statusCode).toBe(503);
    expect(body(result).message).toMatch(/^Inventory storage is temporarily unavailable/);
    expect(added).toContain(METRIC_NAMES.storageUnavailable);
    expect(errorLogs.map(([message]) => message)).toEqual(['request failed']);
  });
});

describe('Function: updateInventory', () => {
  function setup() {
    const repository = new InMemoryInventoryRepository([
      anInventoryItem({ petId: '1', quantity: 3, status: 'pending' }),
    ]);
    const handler = createUpdate({ repository, idempotent: (_request, _context, operation) => operation() });
    /** The answer to a PATCH of the sample event with `overrides`. */
    const update = (overrides: Parameters<typeof anApiGatewayEvent>[0] = {}) =>
      handler(anApiGatewayEvent(overrides), aLambdaContext());
    return { repository, update };
  }

  it("writes who and why with the change: source api, the caller's key id, the request id and the time", async () => {
    // Prepare
    const { repository, update } = setup();
    const before = new Date().toISOString();
    // Act
    await update({
      body: '{"quantity":9}',
      requestContext: { requestId: 'req-origin', authorizer: { principalId: 'key_abc', keyId: 'key_abc' } },
    });
    // Assess
    const origin = repository.origins.get('1');
    expect(origin).toMatchObject({ source: 'api', actor: 'key_abc', requestId: 'req-origin' });
    expect(origin?.at.localeCompare(before)).toBeGreaterThanOrEqual(0);
    expect(origin?.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('checks petId before the body: a bad petId with a bad body is a petId error', async () => {
    const { update } = setup();
    const result = await update({ pathParameters: { petId: 'x' }, body: 'garbage', headers: {} });
    expect(result.statusCode).toBe(400);
    expect(body(result).message).toMatch(/^petId must be/);
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After and no internals when storage is unavailable', async () => {
    const { repository, update } = setup();
    repository.failWith = new StorageUnavailableError('UpdateItem failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { name: 'TimeoutError' }),
    });
    const result = await update();
    expect(result.statusCode).toBe(503);
    expect(result.headers).toMatchObject({ 'Retry-After': '1', 'Cache-Control': 'no-store' });
    expect(body(result).code).toBe('SERVICE_UNAVAILABLE');
    expect(result.body).not.toMatch(/ECONNREFUSED|UpdateItem|Error|at /);
    expect(result.body).toContain('req-123');
  });

  it('answers a generic 500 INTERNAL for an unexpected failure, naming only the request id', async () => {
    const { repository, update } = setup();
    repository.failWith = new TypeError("Cannot read properties of undefined (reading 'N') at toInventoryItem");
    const result = await update();
    expect(result.statusCode).toBe(500);
    expect(body(result)).toEqual({
      code: 'INTERNAL',
      message: 'An internal error occurred. Request id: req-123.',
      status: 500,
    });
  });
});

describe('Function: listInventory (streamed)', () => {
  const list = (
    repository: Pick<InventoryRepository, 'list'>,
    headers: Record<string, string> = {},
    context = aLambdaContext(),
  ) =>
    callStreaming(
      createList({ feed: aFeedAt(), repository }),
      anApiGatewayEvent({ httpMethod: 'GET', body: null, headers }),
      context,
    );

  // Ordering is the repository's (InventoryTable, tested against DynamoDB Local); the handler keeps its order.
  it('streams every entry the repository lists, in petId order, with exact int64 digits and no-store', async () => {
    // Prepare
    const repository = new InMemoryInventoryRepository([
      anInventoryItem({ petId: '9223372036854775807' }),
      anInventoryItem({ petId: '10' }),
      anInventoryItem({ petId: '9' }),
    ]);

    // Act
    const outcome = await list(repository);

    // Assess
    expect(outcome).toMatchObject({ statusCode: 200, completed: true });
    expect(outcome.text).toBe(
      '[{"petId":9,"quantity":3,"status":"available"},{"petId":10,"quantity":3,"status":"available"},{"petId":9223372036854775807,"quantity":3,"status":"available"}]',
    );
    expect(outcome.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      Vary: 'Accept-Encoding',
    });
    expect(outcome.headers['Content-Encoding']).toBeUndefined();
  });

  it('writes a large list in chunks of ENTRIES_PER_CHUNK entries, which joined are the whole array', async () => {
    // Prepare
    const items = Array.from({ length: 3 * ENTRIES_PER_CHUNK + 5 }, (_, i) =>
      anInventoryItem({ petId: String(9_000_000_000_000_000_000n + BigInt(i)), quantity: i }),
    );

    // Act
    const outcome = await list(new InMemoryInventoryRepository(items));

    // Assess
    expect(outcome.chunks).toBeGreaterThanOrEqual(4);
    expect(outcome.text).toBe(`[${items.map(inventoryItemJson).join(',')}]`);
  });

  it('answers an empty array for an empty table', async () => {
    const outcome = await list(new InMemoryInventoryRepository());
    expect(outcome.text).toBe('[]');
  });

  describe('content negotiation (Accept-Encoding, RFC 9110 §12.5.3)', () => {
    const repository = new InMemoryInventoryRepository(
      Array.from({ length: 2000 }, (_, i) => anInventoryItem({ petId: String(i), quantity: i })),
    );
    let identityBody: string | undefined;
    beforeAll(async () => {
      identityBody = (await list(repository)).text;
    });

    it.each([
      ['gzip, deflate, br', 'gzip'],
      ['GZIP', 'gzip'],
      ['*', 'gzip'],
      ['gzip;q=0.5, identity;q=0.4', 'gzip'],
      ['br;q=1, gzip;q=0.8', 'gzip'],
      ['', 'identity'],
      ['gzip;q=0', 'identity'],
      ['gzip;q=0.5, identity', 'identity'],
      ['br', 'identity'],
      ['gzip;q=2', 'identity'],
      // x-gzip is gzip (RFC 9110 §8.4.1.3) and a member whose weight breaks the qvalue grammar is ignored: where
      // `negotiator` differs (functions/http/content-encoding.ts says why it is not used). The q parameter's name is
      // case-insensitive (§12.4.2).
      ['x-gzip', 'gzip'],
      ['gzip;q=0.5x', 'identity'],
      ['gzip;Q=0', 'identity'],
    ])('answers Accept-Encoding %p with %p and the same entries', async (acceptEncoding, coding) => {
      // Act
      const outcome = await list(repository, { 'Accept-Encoding': acceptEncoding });

      // Assess
      expect(outcome.statusCode).toBe(200);
      expect(outcome.headers['Content-Encoding']).toBe(coding === 'gzip' ? 'gzip' : undefined);
      expect(outcome.headers.Vary).toBe('Accept-Encoding');
      expect(outcome.text).toBe(identityBody);
      if (coding === 'gzip') expect(outcome.raw.length).toBeLessThan((identityBody ?? '').length / 3);
    });

    it('answers identity when the request has no Accept-Encoding at all', async () => {
      const outcome = await list(repository, {});
      expect(outcome.headers['Content-Encoding']).toBeUndefined();
      expect(outcome.raw.toString()).toBe(identityBody);
    });

    it.each(['identity;q=0', 'identity;q=0, gzip;q=0', '*;q=0', 'br, identity;q=0'])(
      'answers %p, which refuses both gzip and identity, with 406 NOT_ACCEPTABLE before reading the table',
      async (acceptEncoding) => {
        // Prepare
        const failing = new InMemoryInventoryRepository();
        failing.failWith = new Error('the table must not be read');

        // Act
        const outcome = await list(failing, { 'Accept-Encoding': acceptEncoding });

        // Assess
        expect(outcome.statusCode).toBe(406);
        expect(JSON.parse(outcome.text ?? '')).toMatchObject({ code: 'NOT_ACCEPTABLE', status: 406 });
        expect(outcome.headers).toMatchObject({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      },
    );
  });

  describe('failures', () => {
    const { added, errorLogs } = captureMetricsAndErrors();

    it('answers 503 SERVICE_UNAVAILABLE with Retry-After, whole and identity, when the Scan fails before the first byte', async () => {
      // Prepare
      const repository = new InMemoryInventoryRepository();
      repository.failWith = new StorageUnavailableError('Scan failed: storage unavailable');

      // Act
      const outcome = await list(repository, { 'Accept-Encoding': 'gzip' });

      // Assess
      expect(outcome).toMatchObject({ statusCode: 503, completed: true });
      expect(outcome.headers).toMatchObject({ 'Retry-After': '1', 'Cache-Control': 'no-store' });
      expect(outcome.headers['Content-Encoding']).toBeUndefined();
      expect(JSON.parse(outcome.text ?? '')).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect(added).toEqual([METRIC_NAMES.storageUnavailable]);
    });

    it.each([
      ['identity', {}],
      ['gzip', { 'Accept-Encoding': 'gzip' }],
    ])(
      'aborts a %s body that fails after its first byte: no complete array, logged with the request id, counted',
      async (coding, headers) => {
        // Act
        const outcome = await list(entriesBreakingAt(30 * ENTRIES_PER_CHUNK, 20 * ENTRIES_PER_CHUNK), headers);

        // Assess
        expect(outcome.statusCode).toBe(200);
        expect(outcome.completed).toBe(false);
        expect(outcome.raw.length).toBeGreaterThan(0);
        expect(parsesAsJson(outcome.raw, coding === 'gzip')).toBe(false);
        expect(added).toContain(METRIC_NAMES.responseStreamAborted);
        expect(errorLogs).toContainEqual([
          'response stream aborted after its first byte',
          expect.objectContaining({ requestId: 'req-123' }),
        ]);
      },
    );

    it('aborts the stream before the function times out, so the failure is logged and counted', async () => {
      // Prepare: a context whose remaining time falls to 10 ms while the third chunk is serialized, whoever asks it
      // how often (middy reads it too): the body has started by then, and the deadline margin is passed.
      let remainingMs = 60_000;
      const context = { ...aLambdaContext(), getRemainingTimeInMillis: () => remainingMs };
      const items = Array.from({ length: 5 * ENTRIES_PER_CHUNK }, (_, i) => anInventoryItem({ petId: String(i) }));
      const timeRunsOutAt = items[2 * ENTRIES_PER_CHUNK] as InventoryItem;
      Object.defineProperty(timeRunsOutAt, 'petId', {
        get: () => {
          remainingMs = 10;
          return String(2 * ENTRIES_PER_CHUNK);
        },
      });
      const repository = listOnlyRepository(async function* () {
        for (let start = 0; start < items.length; start += ENTRIES_PER_CHUNK)
          yield items.slice(start, start + ENTRIES_PER_CHUNK);
      });

      // Act
      const outcome = await list(repository, {}, context);

      // Assess
      expect(outcome.completed).toBe(false);
      expect(outcome.raw.length).toBeGreaterThan(0);
      expect(parsesAsJson(outcome.raw, false)).toBe(false);
      expect(added).toContain(METRIC_NAMES.responseStreamAborted);
      expect(errorLogs).toContainEqual([
        'response stream aborted after its first byte',
        expect.objectContaining({ requestId: 'req-123' }),
      ]);
    });
  });
});

/**
 * "Streamed responses are not interrupted or stopped when the invoking client connection is broken" (Lambda Developer
 * Guide, "Response streaming for Lambda functions"), nor by local/lambda/streaming.ts: a hang-up must not be a function
 * error (no ListInventoryErrorsAlarm page, no canary rollback) nor an aborted stream.
 */
describe('Function: listInventory, a client that hangs up mid-list', () => {
  const { added, errorLogs } = captureMetricsAndErrors();

  it.each([
    ['identity', {}],
    ['gzip', { 'Accept-Encoding': 'gzip' }],
  ])(
    'runs the %s list to its end and succeeds, logging no error and counting no aborted stream',
    async (_, headers) => {
      // Prepare: 20 batches, counted as the function reads them.
      const batches = 20;
      let read = 0;
      const repository = listOnlyRepository(async function* () {
        for (let b = 0; b < batches; b++) {
          read++;
          yield Array.from({ length: ENTRIES_PER_CHUNK }, (_, i) =>
            anInventoryItem({ petId: String(b * ENTRIES_PER_CHUNK + i) }),
          );
        }
      });
      const { response, completion } = invokeStreamingHandler(
        createList({ feed: aFeedAt(), repository }),
        anApiGatewayEvent({ httpMethod: 'GET', body: null, headers }),
        aLambdaContext(),
      );
      const { body: stream } = await response;
      await new Promise((resolve) => stream.once('data', resolve));

      // Act: the reader goes away after the first chunk.
      stream.destroy();

      // Assess
      await expect(completion).resolves.toBeUndefined();
      expect(read).toBe(batches);
      expect(added).not.toContain(METRIC_NAMES.responseStreamAborted);
      expect(added).toContain(METRIC_NAMES.inventoryEntriesListed);
      expect(errorLogs).toEqual([]);
    },
  );
});

describe('Function: listInventory, the stream and its pages', () => {
  const event = (query: Record<string, string> | null, multi?: Record<string, string[]>) =>
    anApiGatewayEvent({
      httpMethod: 'GET',
      body: null,
      queryStringParameters: query,
      multiValueQueryStringParameters:
        multi ?? (query ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])) : null),
    });
  const ids = ['-9223372036854775808', '-5', '0', '7', '9007199254740993', '9223372036854775807'];
  const repository = new InMemoryInventoryRepository(ids.map((petId) => anInventoryItem({ petId })));
  const petIds = (text: string | undefined) => [...(text ?? '').matchAll(/"petId":(-?\d+)/g)].map((m) => m[1]);
  const page = (query: Record<string, string>, multi?: Record<string, string[]>) =>
    callStreaming(createList({ feed: aFeedAt(), repository }), event(query, multi), aLambdaContext());
  /** The list's Link to the feed when the feed has no change yet: its start. */
  const FEED_START_LINK = `</v1/inventory/changes?cursor=${encodeFeedCursor(FEED_START)}>; rel="changes"`;

  it('sends the first batch before the repository has read the next one', async () => {
    // Prepare: a repository whose second batch waits until the test lets it go.
    const { repository: slow, release } = listHeldAfterFirstBatch();
    // Act
    const { response, completion } = invokeStreamingHandler(
      createList({ feed: aFeedAt(), repository: slow }),
      event(null),
      aLambdaContext(),
    );
    const { statusCode, body: stream } = await response;
    const firstChunk = await new Promise<string>((resolve) =>
      stream.once('data', (chunk: Buffer) => resolve(String(chunk))),
    );
    release();
    for await (const _ of stream);
    await completion;
    // Assess
    expect(statusCode).toBe(200);
    expect(firstChunk).toBe('[{"petId":1,"quantity":3,"status":"available"}');
  });

  it('answers the first `limit` entries with a Link to the next page (RFC 8288), and the last page with none', async () => {
    // Act
    const first = await page({ limit: '4' });
    const last = await page({ limit: '4', after: '7' });
    const exact = await page({ limit: '2', after: '7' });
    // Assess
    expect(first.statusCode).toBe(200);
    expect(petIds(first.text)).toEqual(ids.slice(0, 4));
    expect(first.headers.Link).toBe(`</v1/inventory?limit=4&after=7>; rel="next", ${FEED_START_LINK}`);
    expect(petIds(last.text)).toEqual(ids.slice(4));
    expect(last.headers.Link).toBe(FEED_START_LINK);
    expect(petIds(exact.text)).toEqual(ids.slice(4));
    expect(exact.headers.Link).toBe(FEED_START_LINK);
  });

  it('lists everything after `after` without `limit`, as one stream with no Link', async () => {
    const outcome = await page({ after: '-0005' });
    expect(petIds(outcome.text)).toEqual(ids.slice(2));
    expect(outcome.headers.Link).toBe(FEED_START_LINK);
  });

  it('answers an empty page as [] with no Link but the feed position', async () => {
    const outcome = await page({ limit: '10', after: '9223372036854775807' });
    expect(outcome.text).toBe('[]');
    expect(outcome.headers.Link).toBe(FEED_START_LINK);
  });

  it('names an idle feed\'s position as the list began (its counter), settled from then, as a Link rel="changes"', async () => {
    // Act
    const began = Date.now();
    const outcome = await callStreaming(
      createList({ feed: aFeedAt(42, '2026-11-23T10:00:00.000Z'), repository }),
      event(null),
      aLambdaContext(),
    );
    // Assess: the counter's sequence; its time the read's less the settle window (docs/api.md), so it never expires idle.
    const cursor = /cursor=([\w-]+)>; rel="changes"$/.exec(String(outcome.headers.Link))?.[1] ?? '';
    const [sequence, at] = Buffer.from(cursor, 'base64url').toString().split('.').map(Number);
    expect(sequence).toBe(42);
    expect(at).toBeGreaterThanOrEqual(began - SETTLE_MS);
    expect(at).toBeLessThanOrEqual(Date.now() - SETTLE_MS);
  });

  it.each([
    ['limit', { limit: '0' }],
    ['limit', { limit: '10001' }],
    ['limit', { limit: '1.5' }],
    ['limit', { limit: '' }],
    ['after', { after: '' }],
    ['after', { after: '9223372036854775808' }],
    ['after', { after: '-9223372036854775809' }],
  ])('answers 400 VALIDATION_FAILED naming %s for %j, reading nothing', async (name, query) => {
    // Prepare
    const failing = new InMemoryInventoryRepository();
    failing.failWith = new Error('the repository must not be read');
    // Act
    const outcome = await callStreaming(
      createList({ feed: aFeedAt(), repository: failing }),
      event(query),
      aLambdaContext(),
    );
    // Assess
    expect(outcome.statusCode).toBe(400);
    const error = JSON.parse(outcome.text ?? '{}');
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(error.message).toMatch(new RegExp(`^${name} `));
  });

  it.each(['-1', '0', '10001'])('says what it got for limit=%s, as every range refusal does', async (limit) => {
    const outcome = await page({ limit });
    expect(JSON.parse(outcome.text ?? '{}').message).toBe(`limit must be an integer from 1 to 10000; got ${limit}.`);
  });

  it('answers 400 naming the parameter when it is given twice', async () => {
    const outcome = await page({ limit: '3' }, { limit: ['2', '3'] });
    expect(outcome.statusCode).toBe(400);
    expect(JSON.parse(outcome.text ?? '{}').message).toBe('limit must be given once.');
  });
});

describe('Function: the 501 routes', () => {
  afterEach(() => {
    delete process.env.PETS_SUNSET_AT;
    delete process.env.PETS_DEPRECATED_AT;
  });

  it('answers GET /pets/{petId} with 501 NOT_IMPLEMENTED, Deprecation and the configured Sunset', async () => {
    process.env.PETS_DEPRECATED_AT = '2026-11-22';
    process.env.PETS_SUNSET_AT = '2027-06-30';
    const result = await getPet(anApiGatewayEvent({ httpMethod: 'GET' }), aLambdaContext());
    expect(result.statusCode).toBe(501);
    expect(body(result)).toMatchObject({ code: 'NOT_IMPLEMENTED', status: 501 });
    expect(result.headers).toMatchObject({ Deprecation: '@1795305600', Sunset: 'Wed, 30 Jun 2027 00:00:00 GMT' });
  });

  it('sends no Sunset header when the stage configures no sunset date', () => {
    expect(deprecationHeaders({ deprecatedAt: '2026-11-22' })).toEqual({ Deprecation: '@1795305600' });
    expect(deprecationHeaders({ sunsetAt: 'not a date' })).toEqual({});
  });

  // The API error alarm leaves the routes flagged notImplemented out: each flagged route's deployed handler must
  // really answer 501, whatever routes are added or flagged later.
  it.each(ROUTES.filter((route) => route.notImplemented).map((route) => [`${route.method} ${route.path}`, route]))(
    'answers %s, flagged notImplemented in service/routes.ts, with 501 NOT_IMPLEMENTED from its handler module',
    async (_name, route) => {
      const { handler } = (await import(`../../functions/handlers/${route.handler}`)) as { handler: typeof getPet };
      const result = await handler(anApiGatewayEvent({ httpMethod: route.method }), aLambdaContext());
      expect(result.statusCode).toBe(501);
      expect(body(result)).toMatchObject({ code: 'NOT_IMPLEMENTED', status: 501 });
    },
  );
});

describe('Function: authorizer', () => {
  // The alarm watches AuthorizerUnavailable, never Lambda Errors.
  const { added } = captureMetricsAndErrors();
  const methodArn = 'arn:aws:execute-api:us-east-1:1:api/v1/GET/inventory';
  /** The authorizer's answer to a key no one issued. */
  const refuseUnknownKey = () =>
    createAuthorizer({ keys: new InMemoryApiKeyRepository() })(
      { type: 'TOKEN', authorizationToken: 'Bearer nope', methodArn },
      aLambdaContext(),
    );
  /** The authorizer's answer to a well-formed key while the key table fails. */
  const checkKeyWithStorageDown = () => {
    const keys = new InMemoryApiKeyRepository();
    keys.failWith = new StorageUnavailableError('down');
    const token = `Bearer ${generateApiKey('x').key}`;
    return createAuthorizer({ keys })({ type: 'TOKEN', authorizationToken: token, methodArn }, aLambdaContext());
  };

  it('throws exactly "Unauthorized" for a bad key, so API Gateway answers 401, and counts it as ApiKeyRefused', async () => {
    await expect(refuseUnknownKey()).rejects.toThrow(/^Unauthorized$/);
    expect(added).toEqual([METRIC_NAMES.apiKeyRefused]);
  });

  it('throws something other than "Unauthorized" when storage fails (503), and counts AuthorizerUnavailable', async () => {
    const outcome = checkKeyWithStorageDown();
    await expect(outcome).rejects.toThrow(Error);
    await expect(outcome).rejects.not.toThrow(/^Unauthorized$/);
    expect(added).toEqual([METRIC_NAMES.authorizerUnavailable]);
  });
});

describe('Function: defaultDimensions', () => {
  it('puts the stage the stack set on every metric, so two stages in one account stay apart', () => {
    expect(defaultDimensions({ STAGE: 'production' })).toEqual({ stage: 'production' });
  });

  it('adds no stage dimension locally, where no stage is set', () => {
    expect(defaultDimensions({})).toEqual({});
  });
});
