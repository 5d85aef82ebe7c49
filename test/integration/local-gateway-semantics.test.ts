import type { Writable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createHandler as createList, ENTRIES_PER_CHUNK } from '../../functions/handlers/list-inventory';
import { LAMBDA_MAX_PAYLOAD_BYTES } from '../../functions/http/responses';
import { importHandler, type LocalGateway, startLocalGateway } from '../../local/gateway';
import { streamifyResponse } from '../../local/lambda/streaming';
import {
  BODY_OVER_GATEWAY_LIMIT,
  corsPreflightHeaders,
  errorTemplate,
  type GatewayResponseType,
  gatewayResponse,
  OUTSIDE_THE_STAGE,
  renderTemplate,
  type UnshapedGatewayAnswer,
} from '../../service/gateway-responses';
import { AUTHORIZER_HANDLER } from '../../service/routes';
import { aFeedAt } from '../fixtures/builders';
import { snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';
import { closeRawAgent, rawHttp, rawRequest, type SocketResponse, socketExchange } from '../helpers/raw-http';
import { entriesBreakingAt } from '../helpers/streaming';

const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type AnyResponse = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/** The answer is exactly the stage's gateway response of `type`, rendered for this request's id. */
function expectGatewayAnswer(response: AnyResponse, type: GatewayResponseType): void {
  const spec = gatewayResponse(type);
  const requestId = String(response.headers['x-amzn-requestid']);
  expect(requestId).toMatch(REQUEST_ID);
  expect(response.status).toBe(spec.status);
  expect(JSON.parse(response.text)).toEqual(
    JSON.parse(renderTemplate(errorTemplate(spec.code, spec.message), { requestId, 'error.responseType': type })),
  );
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    expect(response.headers[name.toLowerCase()]).toBe(value);
  }
}

/** The answer is API Gateway's own, which no gateway response shapes: its status, headers and body, no CORS. */
function expectUnshapedAnswer(response: AnyResponse, unshaped: UnshapedGatewayAnswer): void {
  expect(String(response.headers['x-amzn-requestid'])).toMatch(REQUEST_ID);
  expect(response.status).toBe(unshaped.status);
  expect(response.text).toBe(unshaped.body);
  for (const [name, value] of Object.entries(unshaped.headers)) {
    expect(response.headers[name.toLowerCase()]).toBe(value);
  }
  expect(response.headers['access-control-allow-origin']).toBeUndefined();
}

/** A raw HTTP/1.1 request with this file's key, which the answer ends (`Connection: close`). */
function keyedRawHttp(requestLine: string, extra: [string, string][] = [], body = ''): string {
  const headers: [string, string][] = [['Host', 'h'], ['Authorization', `Bearer ${stack.key}`], ...extra];
  return rawHttp(requestLine, [...headers, ['Connection', 'close']], body);
}

/**
 * `GET path` with this file's key, read off the socket until the gateway closes it: every byte as sent (chunked
 * framing included), and answers the contract helpers would refuse (a fake function's) are not checked.
 */
function rawGetWithKey(baseUrl: string, path: string, extra: [string, string][] = []): Promise<SocketResponse> {
  return socketExchange(baseUrl, keyedRawHttp(`GET ${path} HTTP/1.1`, extra), 30_000);
}

let events: APIGatewayProxyEvent[] = [];
let authorizerCalls = 0;
let authorizerMode: 'real' | 'throws' | 'hangs' = 'real';
let functionMode: 'real' | 'throws' | 'malformed' | 'hangs' | 'near-deadline' | 'late' | 'late-throw' | 'base64' =
  'real';
let listMode: 'real' | 'fails-before-prelude' | 'fails-after-prelude' | 'hangs-before-prelude' | 'hangs-after-prelude' =
  'real';
/** Settles once a function that outlived its timeout has delivered its late result (or error) or written again. */
let lateDelivery: Promise<void> = Promise.resolve();
/** A function that never returns, as one stuck on a call that never answers. */
const never = () => new Promise<never>(() => undefined);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** How long after its deadline a late function returns or throws. */
const LATE_BY_MS = 1500;
/** How long before its deadline (by its context) the near-deadline function starts its real work: room for a PATCH on a busy machine. */
const NEAR_DEADLINE_MARGIN_MS = 2000;
/** The streaming runtime's `HttpResponseStream.from`, as a handler reaches it through the `awslambda` global. */
const httpResponseStream = (stream: unknown, prelude: Record<string, unknown>) =>
  (
    globalThis as unknown as {
      awslambda: { HttpResponseStream: { from(s: unknown, p: Record<string, unknown>): Writable } };
    }
  ).awslambda.HttpResponseStream.from(stream, prelude);

/** Entries whose serialization fails past the first chunks: a list function failing after its first byte. */
const BREAKING_LIST = createList({
  feed: aFeedAt(),
  repository: entriesBreakingAt(40 * ENTRIES_PER_CHUNK, 30 * ENTRIES_PER_CHUNK),
});

/**
 * The real handlers, with the authorizer, a buffered function (GET /pets/{petId}) and the streaming list function
 * able to fail as deployed functions can. The list stays a streaming function (its integration streams).
 */
async function loadHandler(name: string) {
  const handler = await importHandler(name);
  if (name === 'list-inventory') {
    return streamifyResponse(async (event: unknown, stream: unknown, context: unknown) => {
      events.push(event as APIGatewayProxyEvent);
      if (listMode === 'fails-before-prelude') throw new Error('function crashed');
      if (listMode === 'hangs-before-prelude') return never();
      if (listMode === 'hangs-after-prelude') {
        const body = httpResponseStream(stream, { statusCode: 200, headers: { 'Content-Type': 'application/json' } });
        body.write('[{"petId":1,"quantity":12,');
        const done = (context as { getRemainingTimeInMillis(): number }).getRemainingTimeInMillis() + 100;
        // Writes the rest after its deadline: the client must never see it.
        lateDelivery = sleep(done).then(() => {
          body.end('"status":"available"}]');
        });
        return never();
      }
      const streaming = (listMode === 'fails-after-prelude' ? BREAKING_LIST : handler) as unknown as (
        ...args: unknown[]
      ) => Promise<void>;
      return streaming(event, stream, context);
    }) as unknown as typeof handler;
  }
  return async (event: unknown, context: Parameters<typeof handler>[1]) => {
    if (name === 'authorizer') {
      authorizerCalls++;
      if (authorizerMode === 'throws') throw new Error('AuthorizerFailure');
      if (authorizerMode === 'hangs') return never();
    }
    if (name === 'get-pet') {
      if (functionMode === 'throws') throw new Error('function crashed');
      if (functionMode === 'malformed') return { statusCode: 'two hundred' };
      if (functionMode === 'hangs') return never();
      if (functionMode === 'base64') {
        const body = Buffer.from('{"a":1}').toString('base64');
        return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body, isBase64Encoded: true };
      }
      if (functionMode === 'late' || functionMode === 'late-throw') {
        // Well after the deadline, so the gateway's answer (at the deadline) comes first even on a busy machine.
        const late = sleep(context.getRemainingTimeInMillis() + LATE_BY_MS);
        lateDelivery = late;
        await late;
        if (functionMode === 'late-throw') throw new Error('function failed after its timeout');
        return { statusCode: 200, headers: {}, body: '{"answered":"too late"}' };
      }
    }
    if (name !== 'authorizer' && functionMode === 'near-deadline') {
      // Starts its real work with only the margin left before its deadline, as its context tells it.
      await sleep(context.getRemainingTimeInMillis() - NEAR_DEADLINE_MARGIN_MS);
    }
    return handler(event, context);
  };
}

// One stack (tables, handlers) per file: the handlers read their table names once, as a Lambda instance does. The
// throttling and CORS describes start gateways of their own over it.
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ loadHandler });
});
afterAll(async () => {
  closeRawAgent();
  await stack?.close();
});

describe('Local gateway: API Gateway semantics, each following the AWS page it names', () => {
  beforeEach(() => {
    stack.gateway.clearAuthorizerCache();
    authorizerMode = 'real';
    functionMode = 'real';
    listMode = 'real';
    events = [];
    authorizerCalls = 0;
  });

  const get = (path: string, headers: Record<string, string> = stack.authHeader) =>
    rawRequest(stack.url, { method: 'GET', path, headers });

  /**
   * "Why do I get API Gateway 401 Unauthorized errors after I create a Lambda authorizer?" (AWS re:Post Knowledge
   * Center, https://repost.aws/knowledge-center/api-gateway-401-error-lambda-authorizer): for a TOKEN authorizer,
   * API Gateway answers 401 without calling the function when the token is missing or does not match the token
   * validation expression (the Authorizer's `identityValidationExpression`, https://docs.aws.amazon.com/apigateway/latest/api/API_Authorizer.html).
   */
  describe('token validation before the authorizer', () => {
    it.each([
      ['no Authorization header', undefined],
      ['an empty one', ''],
      ['another scheme', 'Basic dXNlcjpwYXNz'],
      ['the scheme alone', 'Bearer'],
      [
        'a bearer token that is not shaped like a key (the expression checks the shape, the authorizer the key)',
        'Bearer not-a-key',
      ],
      ['a key one character short', `Bearer psk_${'A'.repeat(42)}`],
    ])('answers %s with the UNAUTHORIZED response (401) and never calls the authorizer', async (_what, value) => {
      const response = await get('/v1/inventory', value === undefined ? {} : { Authorization: value });
      expectGatewayAnswer(response, 'UNAUTHORIZED');
      expect(authorizerCalls).toBe(0);
    });

    it.each([
      ['an unknown key', `Bearer psk_${'A'.repeat(43)}`],
      ['an unknown key in another case of the scheme', `bEARER psk_${'B'.repeat(43)}`],
    ])('calls the authorizer for %s, and it is the one that refuses it (401)', async (_what, value) => {
      const response = await get('/v1/inventory', { Authorization: value });
      expectGatewayAnswer(response, 'UNAUTHORIZED');
      expect(authorizerCalls).toBe(1);
    });
  });

  /**
   * "Call an API with an API Gateway Lambda authorizer"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/call-api-with-api-gateway-lambda-authorization.html):
   * an authorizer that fails otherwise than with `Unauthorized` gets the caller a 500 AuthorizerConfigurationException,
   * the AUTHORIZER_CONFIGURATION_ERROR type of "Gateway response types for API Gateway"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html),
   * which this API answers 503 with Retry-After.
   */
  describe('authorizer errors', () => {
    it('answers the AUTHORIZER_CONFIGURATION_ERROR response (503, Retry-After) when the authorizer throws anything but Unauthorized', async () => {
      authorizerMode = 'throws';
      const response = await get('/v1/inventory');
      expectGatewayAnswer(response, 'AUTHORIZER_CONFIGURATION_ERROR');
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('1');
    });

    it('caches no failed decision: the next call asks the authorizer again', async () => {
      authorizerMode = 'throws';
      await get('/v1/inventory');
      authorizerMode = 'real';
      expect((await get('/v1/inventory')).status).toBe(200);
      expect(authorizerCalls).toBe(2);
    });
  });

  /**
   * "Handling Lambda errors with an API Gateway API" (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html):
   * a refused invocation is a 500 from API Gateway, a function error or a response in the wrong format a 502; the page
   * names no gateway response type, nor does "Gateway response types for API Gateway"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html). Answering a
   * function error with the INTEGRATION_FAILURE response and a malformed result with API_CONFIGURATION_ERROR ("when
   * integration response mapping can't match any template", the closest description) is this project's reading, not
   * documented;
   * "Lambda quotas" (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html): 6 MB invocation
   * payload.
   */
  describe('function failures', () => {
    it('answers the INTEGRATION_FAILURE response (503, Retry-After) when the function throws', async () => {
      functionMode = 'throws';
      expectGatewayAnswer(await get('/v1/pets/1'), 'INTEGRATION_FAILURE');
    });

    it('answers the API_CONFIGURATION_ERROR response (500) when the function returns no proxy result', async () => {
      functionMode = 'malformed';
      expectGatewayAnswer(await get('/v1/pets/1'), 'API_CONFIGURATION_ERROR');
    });

    // "Binary media types for REST APIs in API Gateway"
    // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-payload-encodings.html): a Lambda proxy
    // function's base64 body is binary only for the API's binaryMediaTypes ("You must also configure the
    // binaryMediaTypes"); the stage configures none (test/infra/api.test.ts), so the client gets the text as sent.
    it('sends a base64-encoded result as its text: the stage has no binary media types to decode it for', async () => {
      functionMode = 'base64';
      // Read off the socket: a 200 from /pets/{petId} is this fake function's, not the contract's.
      const response = await rawGetWithKey(stack.url, '/v1/pets/1');
      expect(response.status).toBe(200);
      expect(response.text).toBe(Buffer.from('{"a":1}').toString('base64'));
    });
  });

  /**
   * "Stream the integration response for your proxy integrations in API Gateway"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html) and "Set up a Lambda
   * proxy integration with payload response streaming in API Gateway"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html): the stage
   * sends the status and headers of the function's prelude, then the payload as it streams, with no 6 MB limit and
   * no content encoding of its own; a function error before the prelude is a failed integration.
   */
  describe('streamed responses (GET /inventory)', () => {
    const rawGet = (path: string, extra: [string, string][] = []) => rawGetWithKey(stack.url, path, extra);

    it("passes the body on in chunks (no Content-Length) with the function's headers, ending with the last chunk", async () => {
      const response = await rawGet('/v1/inventory');
      expect(response.status).toBe(200);
      expect(response.headers['transfer-encoding']).toBe('chunked');
      expect(response.headers['content-length']).toBeUndefined();
      expect(response.headers).toMatchObject({
        'content-type': 'application/json',
        'cache-control': 'no-store',
        vary: 'Accept-Encoding',
      });
      expect(response.text.endsWith('0\r\n\r\n')).toBe(true);
    });

    it('leaves compression to the function: gzip only when the function chose it', async () => {
      const gzip = await rawGet('/v1/inventory', [['Accept-Encoding', 'gzip']]);
      const identity = await rawGet('/v1/inventory', [['Accept-Encoding', 'identity']]);
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(identity.headers['content-encoding']).toBeUndefined();
    });

    it('answers INTEGRATION_FAILURE when the streaming function fails before its prelude', async () => {
      listMode = 'fails-before-prelude';
      expectGatewayAnswer(await get('/v1/inventory'), 'INTEGRATION_FAILURE');
    });

    it('closes the connection without the terminating chunk when the function fails after its prelude', async () => {
      listMode = 'fails-after-prelude';
      const response = await rawGet('/v1/inventory');
      expect(response.status).toBe(200);
      expect(response.text.length).toBeGreaterThan(0);
      expect(response.text.endsWith('0\r\n\r\n')).toBe(false);
      await expect(get('/v1/inventory')).rejects.toThrow();
    });
  });

  /** "Amazon API Gateway quotas" (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html). */
  describe('size limits', () => {
    const patchWithBody = (bytes: number) =>
      rawRequest(stack.url, {
        method: 'PATCH',
        path: '/v1/inventory/1',
        headers: { ...stack.authHeader, 'Content-Type': 'application/json' },
        body: Buffer.alloc(bytes, 0x20),
        timeoutMs: 60_000,
      });

    it('answers a body API Gateway accepts (10 MB) but Lambda cannot take (6 MB) with INTEGRATION_FAILURE, changing nothing', async () => {
      // Prepare
      const before = await snapshotTable(stack.client, stack.tables.inventory);
      // Act
      const response = await patchWithBody(LAMBDA_MAX_PAYLOAD_BYTES + 1);
      // Assess
      expectGatewayAnswer(response, 'INTEGRATION_FAILURE');
      expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
    });

    // "Amazon API Gateway important notes", REST APIs
    // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html): "Customizing the
    // default gateway response for 413 REQUEST_TOO_LARGE isn't currently supported", so the stage's template does not
    // apply: API Gateway's own plain-text 413, without CORS (service/gateway-responses.ts, BODY_OVER_GATEWAY_LIMIT).
    it('answers a body over API Gateway payload limit (10 MB) with its own 413, which no gateway response shapes', async () => {
      expectUnshapedAnswer(await patchWithBody(10 * 1024 * 1024 + 1), BODY_OVER_GATEWAY_LIMIT);
    });
  });

  /**
   * "Lambda proxy integrations in API Gateway", input format
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html): a header or
   * query parameter sent more than once is in `multiValueHeaders` / `multiValueQueryStringParameters` with every
   * value, and in `headers` / `queryStringParameters` with the last one.
   */
  it('hands the function a repeated header and query parameter as their last value, and every value in the multi-value maps', async () => {
    // Act
    const response = await socketExchange(
      stack.url,
      keyedRawHttp('GET /v1/inventory?limit=5&limit=7 HTTP/1.1', [
        ['X-Repeated', 'first'],
        ['X-Repeated', 'second'],
      ]),
    );
    // Assess: the list refuses a repeated limit (its own rule); what matters is what it was given.
    expect(response.status).toBe(400);
    const [event] = events;
    expect(event?.headers['X-Repeated'] ?? event?.headers['x-repeated']).toBe('second');
    expect(event?.multiValueHeaders['X-Repeated'] ?? event?.multiValueHeaders['x-repeated']).toEqual([
      'first',
      'second',
    ]);
    expect(event?.queryStringParameters?.limit).toBe('7');
    expect(event?.multiValueQueryStringParameters?.limit).toEqual(['5', '7']);
  });

  /**
   * "Amazon API Gateway important notes", REST APIs
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html): "The semicolon
   * character (;) is not supported for any request URL query string and results in the data being split".
   */
  it('splits a query string at a literal semicolon as at &, and keeps an encoded one (%3B) in the value', async () => {
    const response = await get('/v1/inventory?limit=2;after=x%3By');
    // The list refuses the made-up cursor (its own rule); what matters is what it was given.
    expect(response.status).toBe(400);
    expect(events[0]?.queryStringParameters).toEqual({ limit: '2', after: 'x;y' });
  });

  /**
   * RFC 9110 §9.3.2: the answer to HEAD is the one GET would give, without a body. The stage answers HEAD with its
   * ANY method (405 with Allow on a route path), and sends no body.
   */
  it('answers HEAD with the status and headers of its answer and no body', async () => {
    // Every byte the gateway sends until it closes the connection.
    const response = await socketExchange(stack.url, keyedRawHttp('HEAD /v1/inventory HTTP/1.1'), 10_000, true);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET');
    expect(response.text).toBe('');
  });

  /**
   * Names every JavaScript object inherits are ordinary names to API Gateway: the event of
   * "Lambda proxy integrations in API Gateway" (input format) carries them like any other.
   * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html
   */
  describe('inherited member names', () => {
    const NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];

    it('passes query and header names such as constructor and __proto__ to the function as its own members', async () => {
      // Act
      const query = NAMES.map((name, i) => `${name}=${i}`).join('&');
      const response = await socketExchange(
        stack.url,
        keyedRawHttp(
          `GET /v1/inventory?${query}&constructor=again HTTP/1.1`,
          NAMES.map((name): [string, string] => [name, `header-${name}`]),
        ),
      );
      // Assess
      expect(response.status).toBe(200);
      const [event] = events;
      for (const [i, name] of NAMES.entries()) {
        expect(Object.hasOwn(event?.queryStringParameters ?? {}, name)).toBe(true);
        expect(Object.hasOwn(event?.headers ?? {}, name)).toBe(true);
        expect(event?.headers[name]).toBe(`header-${name}`);
        if (name !== 'constructor') expect(event?.queryStringParameters?.[name]).toBe(String(i));
      }
      expect(event?.queryStringParameters?.constructor).toBe('again');
      expect(event?.multiValueQueryStringParameters?.constructor).toEqual(['0', 'again']);
      expect(event?.multiValueHeaders.valueOf).toEqual(['header-valueOf']);
    });

    it('updates a pet whatever inherited names the request carries', async () => {
      const body = '{"quantity":5}';
      const response = await socketExchange(
        stack.url,
        keyedRawHttp(
          'PATCH /v1/inventory/1?__proto__=1&toString=2 HTTP/1.1',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', String(body.length)],
            ['constructor', 'x'],
            ['__proto__', 'y'],
          ],
          body,
        ),
      );
      expect(response.status).toBe(200);
      expect(response.text).toBe('{"petId":1,"quantity":5,"status":"available","version":2}');
    });
  });

  describe('paths outside the stage and targets that are no URL path', () => {
    // "How do I troubleshoot HTTP 403 errors from API Gateway?"
    // (https://repost.aws/knowledge-center/api-gateway-troubleshoot-403-forbidden): a path outside the stage reaches
    // no API; API Gateway answers 403 Forbidden (ForbiddenException) itself, not with this API's gateway responses.
    it.each([
      ['a path under another stage', 'GET /v2/inventory HTTP/1.1'],
      ['the root', 'GET / HTTP/1.1'],
      ['a target that is not a URL path', 'GET //[ HTTP/1.1'],
    ])("answers %s with API Gateway's own 403 Forbidden, not this API's 404 and not a 500", async (_what, line) => {
      const response = await socketExchange(
        stack.url,
        rawHttp(line, [
          ['Host', 'h'],
          ['Authorization', `Bearer ${stack.key}`],
        ]),
      );
      expectUnshapedAnswer(response, OUTSIDE_THE_STAGE);
    });

    it('authenticates before it routes a target under /v1 that is not a URL path', async () => {
      const anonymous = await socketExchange(stack.url, rawHttp('GET /v1/[ HTTP/1.1', [['Host', 'h']]));
      const withKey = await socketExchange(
        stack.url,
        rawHttp('GET /v1/[ HTTP/1.1', [
          ['Host', 'h'],
          ['Authorization', `Bearer ${stack.key}`],
        ]),
      );
      expectGatewayAnswer(anonymous, 'UNAUTHORIZED');
      expectGatewayAnswer(withKey, 'MISSING_AUTHENTICATION_TOKEN');
    });
  });

  it('is not throttled unless asked: 200 concurrent requests all reach the function', async () => {
    const responses = await Promise.all(Array.from({ length: 200 }, () => get('/v1/store/orders')));
    expect(new Set(responses.map((response) => response.status))).toEqual(new Set([501]));
  });
});

/**
 * "Throttle requests to your REST APIs for better throughput in API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html): a token bucket
 * per method refilled at the rate, holding the burst; past it, 429 (the THROTTLED type). The page does not say
 * whether API Gateway throttles before or after the authorizer: this gateway does it before.
 */
describe('Local gateway: the stage throttling', () => {
  let gateway: LocalGateway;
  let now = 0;

  beforeAll(async () => {
    gateway = await startLocalGateway(0, {
      log: () => undefined,
      throttling: { rateLimit: 1, burstLimit: 3 },
      clock: () => now,
    });
  });
  afterAll(() => gateway.close());

  it('lets the burst through, answers the THROTTLED response (429, Retry-After) past it, before authentication, and again at the rate', async () => {
    // Act: the clock stands still until it is moved.
    const statuses: number[] = [];
    let throttled: AnyResponse | undefined;
    const get = (path: string) => rawRequest(gateway.url, { method: 'GET', path, headers: stack.authHeader });
    for (let i = 0; i < 4; i++) {
      const response = await get('/v1/inventory');
      statuses.push(response.status);
      if (response.status === 429) throttled = response;
    }
    const anonymous = await rawRequest(gateway.url, { method: 'GET', path: '/v1/inventory' });
    const otherMethod = await get('/v1/store/orders');
    now += 999;
    const tooEarly = await get('/v1/inventory');
    now += 1;
    const later = await get('/v1/inventory');
    // Assess
    expect(statuses).toEqual([200, 200, 200, 429]);
    expectGatewayAnswer(throttled as AnyResponse, 'THROTTLED');
    expect(anonymous.status).toBe(429);
    expect(otherMethod.status).toBe(501);
    expect(tooEarly.status).toBe(429);
    expect(later.status).toBe(200);
  });
});

/**
 * "Throttle requests to your REST APIs for better throughput in API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html): "Per-API,
 * per-stage throttling limits are applied at the API method level for a stage". A method is a resource and an HTTP
 * method of the stage (infra/constructs/inventory-api.ts): a path variable's values share their resource's method,
 * another HTTP method of the same resource is another method, and every path no resource covers reaches the root
 * `/{proxy+}` resource's ANY method.
 */
describe('Local gateway: the stage throttling is per API Gateway method', () => {
  let gateway: LocalGateway;

  beforeAll(async () => {
    gateway = await startLocalGateway(0, {
      log: () => undefined,
      loadHandler,
      throttling: { rateLimit: 1, burstLimit: 2 },
      // The clock stands still: no bucket refills during the test.
      clock: () => 0,
    });
  });
  afterAll(() => gateway.close());

  const send = (method: string, path: string) =>
    rawRequest(gateway.url, { method, path, headers: stack.authHeader }).then((response) => response.status);

  it('counts GET /inventory/1 and GET /inventory/2 in one bucket (GET /inventory/{petId}) and PATCH /inventory/1 in another', async () => {
    // Act: the burst of GET /inventory/{petId} spent on one petId, then another petId, then another HTTP method.
    const burst = [await send('GET', '/v1/inventory/1'), await send('GET', '/v1/inventory/1')];
    const otherPetId = await send('GET', '/v1/inventory/2');
    const otherMethod = await send('PATCH', '/v1/inventory/1');
    // Assess
    expect(burst).toEqual([200, 200]);
    expect(otherPetId).toBe(429);
    // Past the throttle and the authorizer, the function refuses the PATCH's missing body: not a 429.
    expect(otherMethod).toBe(400);
  });

  it('counts two unknown paths in one bucket, the catch-all ANY /{proxy+}', async () => {
    // Act
    const burst = [await send('GET', '/v1/a'), await send('GET', '/v1/a')];
    const otherPath = await send('GET', '/v1/b');
    // Assess
    expect(burst).toEqual([404, 404]);
    expect(otherPath).toBe(429);
  });
});

/**
 * "AWS::ApiGateway::Authorizer" (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-apigateway-authorizer.html),
 * AuthorizerResultTtlInSeconds: API Gateway caches the authorizer's response for the TTL (300 s unless set); 0 turns
 * caching off. The cache is per token (identity source) and serves every route.
 */
describe("Local gateway: the authorizer cache's TTL", () => {
  let now = 0;
  const gateways: LocalGateway[] = [];
  const gatewayWithTtl = async (authorizerCacheTtlSeconds?: number) => {
    const gateway = await startLocalGateway(0, {
      log: () => undefined,
      loadHandler,
      clock: () => now,
      ...(authorizerCacheTtlSeconds === undefined ? {} : { authorizerCacheTtlSeconds }),
    });
    gateways.push(gateway);
    return (path: string) => rawRequest(gateway.url, { method: 'GET', path, headers: stack.authHeader });
  };

  beforeEach(() => {
    now = 0;
    authorizerCalls = 0;
    authorizerMode = 'real';
    functionMode = 'real';
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
  });

  it('reuses a decision on every route until 300 s have passed by default, then asks the authorizer again', async () => {
    // Prepare
    const get = await gatewayWithTtl();
    // Act
    const statuses = [(await get('/v1/inventory')).status];
    now += 299_999;
    statuses.push((await get('/v1/store/orders')).status);
    const callsWithinTtl = authorizerCalls;
    now += 1;
    statuses.push((await get('/v1/inventory')).status);
    // Assess
    expect(statuses).toEqual([200, 501, 200]);
    expect(callsWithinTtl).toBe(1);
    expect(authorizerCalls).toBe(2);
  });

  it('asks the authorizer on every request when the TTL is 0 (caching off)', async () => {
    const get = await gatewayWithTtl(0);
    await get('/v1/inventory');
    await get('/v1/inventory');
    expect(authorizerCalls).toBe(2);
  });
});

/**
 * "CORS for REST APIs in API Gateway" (https://docs.aws.amazon.com/apigateway/latest/developerguide/how-to-cors.html):
 * the stack's preflight is an OPTIONS method with a MOCK integration and no authorizer on every resource.
 */
describe('Local gateway: CORS preflight with several allowed origins', () => {
  const ORIGINS = ['https://staff.example.com', 'https://tools.example.com'];
  let gateway: LocalGateway;

  beforeAll(async () => {
    gateway = await startLocalGateway(0, { log: () => undefined, corsOrigins: ORIGINS, loadHandler });
  });
  afterAll(() => gateway.close());

  it.each([
    ['/v1/inventory', ORIGINS[1]],
    ['/v1/inventory/42', ORIGINS[0]],
    ['/v1/no/such/route', 'https://elsewhere.example'],
  ])(
    'answers OPTIONS %s from %s with 204 and the preflight headers, without a key or the authorizer',
    async (path, origin) => {
      // Prepare
      authorizerCalls = 0;
      // Act (no contract check: preflight answers are outside the contract)
      const response = await socketExchange(
        gateway.url,
        rawHttp(`OPTIONS ${path} HTTP/1.1`, [
          ['Host', 'h'],
          ['Origin', origin as string],
          ['Access-Control-Request-Method', 'PATCH'],
          ['Connection', 'close'],
        ]),
      );
      // Assess
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      const expected = corsPreflightHeaders(ORIGINS, origin);
      for (const [name, value] of Object.entries(expected)) expect(response.headers[name.toLowerCase()]).toBe(value);
      expect(response.headers['x-amzn-requestid']).toMatch(REQUEST_ID);
      expect(authorizerCalls).toBe(0);
    },
  );

  it('still authenticates every other method', async () => {
    const response = await rawRequest(gateway.url, { method: 'GET', path: '/v1/inventory' });
    expectGatewayAnswer(response, 'UNAUTHORIZED');
    // A gateway response cannot echo one of several origins, so it sends none (as the stack's).
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });
});

/**
 * "Configure Lambda function timeout" (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html): Lambda
 * stops a function at its timeout, an invocation that failed. "Handling Lambda errors with an API Gateway API"
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html): API Gateway answers a function error
 * as an internal error (502) and names no gateway response type; answering it with the INTEGRATION_FAILURE response,
 * as for a function that throws, is this project's reading (see "function failures" above); a TOKEN authorizer's error is
 * the AUTHORIZER_CONFIGURATION_ERROR type ("Call an API with an API Gateway Lambda authorizer", above). "Troubleshoot
 * issues with response streaming in API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-troubleshoot.html): a stream cut off
 * by the Lambda timeout leaves the client with "transfer closed with outstanding read data remaining".
 * The timeouts are shortened here; the gateway's defaults are the stack's (test/infra/api.test.ts).
 */
describe('Local gateway: function timeouts, enforced as Lambda does', () => {
  const FUNCTION_TIMEOUT_MS = 2500;
  // Longer for the authorizer: the real one reads DynamoDB Local and must answer in time on a busy machine.
  const AUTHORIZER_TIMEOUT_MS = 4000;
  /**
   * The timeout of a function a test makes hang or answer late: it does nothing that has to fit in it, and the test
   * waits it out in full, so it is short. A function that answers (the real ones, the near-deadline one) keeps the
   * long timeouts above.
   */
  const CUT_OFF_MS = 500;
  let timeouts = { function: FUNCTION_TIMEOUT_MS, authorizer: AUTHORIZER_TIMEOUT_MS };
  let gateway: LocalGateway;

  beforeAll(async () => {
    gateway = await startLocalGateway(0, {
      log: () => undefined,
      loadHandler,
      // Read at each invocation, as Lambda reads a function's configuration.
      functionTimeoutMs: (name) => (name === AUTHORIZER_HANDLER ? timeouts.authorizer : timeouts.function),
    });
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    gateway.clearAuthorizerCache();
    authorizerMode = 'real';
    functionMode = 'real';
    listMode = 'real';
    lateDelivery = Promise.resolve();
    timeouts = { function: FUNCTION_TIMEOUT_MS, authorizer: AUTHORIZER_TIMEOUT_MS };
  });

  const get = (path: string) => rawRequest(gateway.url, { method: 'GET', path, headers: stack.authHeader });

  it('answers the INTEGRATION_FAILURE response (503, Retry-After, request id) when a buffered function has not returned by its timeout', async () => {
    functionMode = 'hangs';
    timeouts.function = CUT_OFF_MS;
    const response = await get('/v1/pets/1');
    expectGatewayAnswer(response, 'INTEGRATION_FAILURE');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
  });

  it("answers what a buffered function returns just inside its timeout, by its context's remaining time", async () => {
    functionMode = 'near-deadline';
    const response = await rawRequest(gateway.url, {
      method: 'PATCH',
      path: '/v1/inventory/2',
      headers: { ...stack.authHeader, 'Content-Type': 'application/json' },
      body: Buffer.from('{"quantity":4}'),
    });
    expect(response.status).toBe(200);
    expect(response.text).toBe('{"petId":2,"quantity":4,"status":"pending","version":2}');
  });

  it.each([
    ['returns', 'late'],
    ['throws', 'late-throw'],
  ] as const)(
    'drops what a function %s after its timeout: the client has INTEGRATION_FAILURE and the gateway goes on',
    async (_outcome, mode) => {
      // Act
      functionMode = mode;
      timeouts.function = CUT_OFF_MS;
      let lateDelivered = false;
      const response = await get('/v1/pets/1');
      void lateDelivery.then(() => {
        lateDelivered = true;
      });
      // The answer came at the timeout, not from the late result: without the timeout it would follow the late throw.
      await Promise.resolve();
      expect(lateDelivered).toBe(false);
      await lateDelivery;
      await sleep(20);
      functionMode = 'real';
      timeouts.function = FUNCTION_TIMEOUT_MS;
      const next = await get('/v1/pets/1');
      // Assess: an unhandled late rejection would have failed this test.
      expectGatewayAnswer(response, 'INTEGRATION_FAILURE');
      expect(next.status).toBe(501);
    },
  );

  it('answers INTEGRATION_FAILURE when the streaming function has not sent its prelude by its timeout', async () => {
    listMode = 'hangs-before-prelude';
    timeouts.function = CUT_OFF_MS;
    expectGatewayAnswer(await get('/v1/inventory'), 'INTEGRATION_FAILURE');
  });

  it('closes the connection without the terminating chunk when the streaming function times out after part of its body', async () => {
    // Act
    listMode = 'hangs-after-prelude';
    timeouts.function = CUT_OFF_MS;
    const response = await rawGetWithKey(gateway.url, '/v1/inventory');
    await lateDelivery;
    // Assess
    expect(response.status).toBe(200);
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(response.text).toContain('[{"petId":1,"quantity":12,');
    expect(response.text).not.toContain('"status":"available"}]');
    expect(response.text.endsWith('0\r\n\r\n')).toBe(false);
  });

  it('answers the AUTHORIZER_CONFIGURATION_ERROR response (503, Retry-After) when the authorizer has not answered by its timeout, and caches no decision', async () => {
    // Act
    authorizerMode = 'hangs';
    timeouts.authorizer = CUT_OFF_MS;
    const response = await get('/v1/inventory');
    authorizerMode = 'real';
    timeouts.authorizer = AUTHORIZER_TIMEOUT_MS;
    const next = await get('/v1/store/orders');
    // Assess
    expectGatewayAnswer(response, 'AUTHORIZER_CONFIGURATION_ERROR');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(next.status).toBe(501);
  });
});
