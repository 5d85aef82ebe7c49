import type { Writable } from 'node:stream';
import { createHandler as createList, ENTRIES_PER_CHUNK } from '../../functions/handlers/list-inventory';
import { LAMBDA_MAX_PAYLOAD_BYTES } from '../../functions/http/responses';
import { importHandler, type LocalGateway, startLocalGateway } from '../../local/gateway';
import { streamifyResponse } from '../../local/lambda/streaming';
import {
  BODY_OVER_GATEWAY_LIMIT,
  errorTemplate,
  type GatewayResponseType,
  gatewayResponse,
  renderTemplate,
} from '../../service/gateway-responses';
import { AUTHORIZER_HANDLER } from '../../service/routes';
import { aFeedAt } from '../fixtures/builders';
import { snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';
import { closeRawAgent, rawHttp, rawRequest, type SocketResponse, socketExchange } from '../helpers/raw-http';
import { entriesBreakingAt } from '../helpers/streaming';

// What docs/development.md promises of the local gateway that a client developer meets and the routes' own tests do
// not show: each behaviour once, following the AWS page it names.

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

/** `GET path` with this file's key, read off the socket until the gateway closes it: every byte as sent. */
function rawGetWithKey(baseUrl: string, path: string): Promise<SocketResponse> {
  const headers: [string, string][] = [
    ['Host', 'h'],
    ['Authorization', `Bearer ${stack.key}`],
    ['Connection', 'close'],
  ];
  return socketExchange(baseUrl, rawHttp(`GET ${path} HTTP/1.1`, headers), 30_000);
}

let authorizerCalls = 0;
let listMode: 'real' | 'fails-after-prelude' | 'hangs-after-prelude' = 'real';
let petsHang = false;
/** Settles once a list that outlived its timeout has written the rest of its body. */
let lateDelivery: Promise<void> = Promise.resolve();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** A function that never returns, as one stuck on a call that never answers. */
const never = () => new Promise<never>(() => undefined);
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

/** The real handlers; the authorizer counted, GET /pets/{petId} and the streaming list able to fail as deployed. */
async function loadHandler(name: string) {
  const handler = await importHandler(name);
  if (name === 'list-inventory') {
    return streamifyResponse(async (event: unknown, stream: unknown, context: unknown) => {
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
    if (name === 'authorizer') authorizerCalls++;
    if (name === 'get-pet' && petsHang) return never();
    return handler(event, context);
  };
}

// One stack (tables, handlers) per file: the handlers read their table names once, as a Lambda instance does. The
// describes below that need other settings start gateways of their own over it.
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ loadHandler });
});
afterAll(async () => {
  closeRawAgent();
  await stack?.close();
});
beforeEach(() => {
  authorizerCalls = 0;
  listMode = 'real';
  petsHang = false;
  lateDelivery = Promise.resolve();
});

describe('Local gateway: API Gateway semantics a client meets', () => {
  /**
   * "Stream the integration response for your proxy integrations in API Gateway"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html): the stage sends the
   * status and headers of the function's prelude, then the payload as it streams.
   */
  describe('streamed responses (GET /inventory)', () => {
    it("passes the body on in chunks (no Content-Length) with the function's headers, ending with the last chunk", async () => {
      const response = await rawGetWithKey(stack.url, '/v1/inventory');
      expect(response.status).toBe(200);
      expect(response.headers['transfer-encoding']).toBe('chunked');
      expect(response.headers['content-length']).toBeUndefined();
      expect(response.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store' });
      expect(response.text.endsWith('0\r\n\r\n')).toBe(true);
    });

    it('closes the connection without the terminating chunk when the function fails after its prelude', async () => {
      listMode = 'fails-after-prelude';
      const response = await rawGetWithKey(stack.url, '/v1/inventory');
      expect(response.status).toBe(200);
      expect(response.text.length).toBeGreaterThan(0);
      expect(response.text.endsWith('0\r\n\r\n')).toBe(false);
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
    // default gateway response for 413 REQUEST_TOO_LARGE isn't currently supported": API Gateway's own plain text.
    it('answers a body over API Gateway payload limit (10 MB) with its own 413, which no gateway response shapes', async () => {
      const response = await patchWithBody(10 * 1024 * 1024 + 1);
      expect(response.headers['x-amzn-requestid']).toMatch(REQUEST_ID);
      expect(response.status).toBe(BODY_OVER_GATEWAY_LIMIT.status);
      expect(response.text).toBe(BODY_OVER_GATEWAY_LIMIT.body);
      for (const [name, value] of Object.entries(BODY_OVER_GATEWAY_LIMIT.headers)) {
        expect(response.headers[name.toLowerCase()]).toBe(value);
      }
    });
  });

  // RFC 9110 §9.3.2: HEAD answers what GET would, without a body; the stage answers it with its ANY method.
  it('answers HEAD with the status and headers of its answer and no body (docs/api.md: 405, Allow: GET)', async () => {
    const request = rawHttp('HEAD /v1/inventory HTTP/1.1', [
      ['Host', 'h'],
      ['Authorization', `Bearer ${stack.key}`],
      ['Connection', 'close'],
    ]);
    const response = await socketExchange(stack.url, request, 10_000, true);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET');
    expect(response.text).toBe('');
  });
});

/**
 * "Throttle requests to your REST APIs for better throughput in API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html): past the burst,
 * 429 (the THROTTLED type). The page does not say whether API Gateway throttles before or after the authorizer: this
 * gateway does it before. The bucket itself is tested in test/unit/local-gateway-rules.test.ts.
 */
describe('Local gateway: the stage throttling', () => {
  let gateway: LocalGateway;

  beforeAll(async () => {
    gateway = await startLocalGateway(0, {
      log: () => undefined,
      throttling: { rateLimit: 1, burstLimit: 2 },
      // The clock stands still: no bucket refills during the test.
      clock: () => 0,
    });
  });
  afterAll(() => gateway.close());

  it('lets the burst through and answers the THROTTLED response (429, Retry-After) past it, before authentication', async () => {
    const get = (headers: Record<string, string>) =>
      rawRequest(gateway.url, { method: 'GET', path: '/v1/inventory', headers });
    const burst = [(await get(stack.authHeader)).status, (await get(stack.authHeader)).status];
    const throttled = await get(stack.authHeader);
    const anonymous = await get({});
    expect(burst).toEqual([200, 200]);
    expectGatewayAnswer(throttled, 'THROTTLED');
    expect(anonymous.status).toBe(429);
  });
});

/**
 * "AWS::ApiGateway::Authorizer" (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-apigateway-authorizer.html),
 * AuthorizerResultTtlInSeconds: API Gateway caches the authorizer's response for the TTL (300 s unless set), per token,
 * for every route; docs/development.md: a revoked key works under npm start for up to AUTHORIZER_CACHE_TTL_SECONDS.
 */
describe("Local gateway: the authorizer cache's TTL", () => {
  let now = 0;
  let gateway: LocalGateway;

  beforeAll(async () => {
    gateway = await startLocalGateway(0, { log: () => undefined, loadHandler, clock: () => now });
  });
  afterAll(() => gateway.close());

  it('reuses a decision on every route until 300 s have passed by default, then asks the authorizer again', async () => {
    // Prepare
    const get = (path: string) => rawRequest(gateway.url, { method: 'GET', path, headers: stack.authHeader });
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
});

// docs/api.md, CORS: with several origins, API Gateway's own answers carry no CORS headers (a static header cannot
// name the one origin that asked).
describe('Local gateway: CORS with several allowed origins', () => {
  let gateway: LocalGateway;

  beforeAll(async () => {
    const corsOrigins = ['https://staff.example.com', 'https://tools.example.com'];
    gateway = await startLocalGateway(0, { log: () => undefined, corsOrigins });
  });
  afterAll(() => gateway.close());

  it("sends no allow-origin header on the gateway's own answers", async () => {
    const response = await rawRequest(gateway.url, {
      method: 'GET',
      path: '/v1/inventory',
      headers: { Origin: 'https://tools.example.com' },
    });
    expectGatewayAnswer(response, 'UNAUTHORIZED');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });
});

/**
 * "Configure Lambda function timeout" (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html):
 * Lambda stops a function at its timeout. API Gateway answers that failed invocation as a function error; answering it
 * with the INTEGRATION_FAILURE response is this project's reading (docs/api.md, "API Gateway's own answers").
 * "Troubleshoot issues with response streaming in API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-troubleshoot.html): a stream cut
 * off by the timeout leaves the client with "transfer closed with outstanding read data remaining".
 */
describe('Local gateway: function timeouts, enforced as Lambda does', () => {
  let gateway: LocalGateway;

  beforeAll(async () => {
    gateway = await startLocalGateway(0, {
      log: () => undefined,
      loadHandler,
      // Short for the functions made to hang; the real authorizer reads DynamoDB Local and must answer on a busy machine.
      functionTimeoutMs: (name) => (name === AUTHORIZER_HANDLER ? 4000 : 500),
    });
  });
  afterAll(() => gateway.close());

  it('answers the INTEGRATION_FAILURE response (503, Retry-After) when a buffered function has not returned by its timeout', async () => {
    petsHang = true;
    const response = await rawRequest(gateway.url, { method: 'GET', path: '/v1/pets/1', headers: stack.authHeader });
    expectGatewayAnswer(response, 'INTEGRATION_FAILURE');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
  });

  it('closes the connection without the terminating chunk when the streaming function times out after part of its body', async () => {
    // Act
    listMode = 'hangs-after-prelude';
    const response = await rawGetWithKey(gateway.url, '/v1/inventory');
    await lateDelivery;
    // Assess
    expect(response.status).toBe(200);
    expect(response.text).toContain('[{"petId":1,"quantity":12,');
    expect(response.text).not.toContain('"status":"available"}]');
    expect(response.text.endsWith('0\r\n\r\n')).toBe(false);
  });
});
