import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Middleware } from 'openapi-fetch';
import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import { createInventoryClient, type InventoryClient } from '../../client/index';
import { generateApiKey } from '../../functions/api-keys/key';
import { createHandler as createSelfCheck } from '../../functions/handlers/self-check';
import { CHECKS } from '../../functions/self-check/checks';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { LOCAL_TABLE_NAMES } from '../../service/local-dynamodb';
import { aLambdaContext } from '../fixtures/builders';
import { type LocalApiProcess, startLocalApiProcess } from '../helpers/api-process';
import { assertMatchesContract, OPENAPI_PATH } from '../helpers/contract';
import { call } from '../helpers/http';
import { putItems, snapshotTable } from '../helpers/local-stack';

const READY_TIMEOUT_MS = 90_000;
const EXIT_TIMEOUT_MS = 20_000;
const MAX_INT64 = 9223372036854775807n;

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A DynamoDB client of npm start's DynamoDB Local. */
const npmStartDynamo = () =>
  createDynamoClient({
    endpoint: started.dynamoEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

/** Checks every response the client receives against openapi.yaml, as client developers' calls would be. */
const contractCheck: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    const text = await response.clone().text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    assertMatchesContract(request.method, schemaPath, {
      status: response.status,
      headers: response.headers,
      text,
      json,
    });
    checked++;
    return undefined;
  },
};
let checked = 0;

// One npm start (with staging's throttling, its default) for every test of this file; the last test stops it.
let started: LocalApiProcess;

beforeAll(async () => {
  started = await startLocalApiProcess({ readyTimeoutMs: READY_TIMEOUT_MS });
}, READY_TIMEOUT_MS + 10_000);

afterAll(() => started?.kill());

describe('End to end: npm start and the generated client', () => {
  let client: InventoryClient;

  beforeAll(() => {
    client = createInventoryClient({ baseUrl: started.baseUrl, apiKey: started.apiKey });
    client.use(contractCheck);
  });

  it('lists the demo inventory ordered by petId, with 9223372036854775807 exact', async () => {
    // Act
    const { data, error, response } = await client.GET('/inventory');
    // Assess
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    const ids = (data ?? []).map((item) => item.petId);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(ids).toContain(MAX_INT64);
    expect(ids).toContain(9007199254740993n);
  });

  it("streams the list gzipped to Node's fetch, which asks for gzip by itself and decodes it", async () => {
    // Act
    const response = await fetch(`${started.baseUrl}/inventory`, {
      headers: { Authorization: `Bearer ${started.apiKey}` },
    });
    const text = await response.text();

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(response.headers.get('content-length')).toBeNull();
    expect(text).toContain('{"petId":9223372036854775807,');
    expect(text.endsWith(']')).toBe(true);
  });

  it('updates the entry of petId 9223372036854775807 and gets that id back digit for digit', async () => {
    // Act
    const { data, error } = await client.PATCH('/inventory/{petId}', {
      params: { path: { petId: MAX_INT64 } },
      body: { quantity: 41 },
    });
    const list = await client.GET('/inventory');
    // Assess
    expect(error).toBeUndefined();
    expect(data).toEqual({ petId: MAX_INT64, quantity: 41, status: 'pending' });
    expect(list.data?.find((item) => item.petId === MAX_INT64)?.quantity).toBe(41);
  });

  it.each([
    { of: 'a pet without an entry', petId: 424242n, quantity: 1, expected: { code: 'NOT_FOUND', status: 404 } },
    {
      of: 'a negative quantity',
      petId: 1n,
      quantity: -1,
      expected: { code: 'VALIDATION_FAILED', status: 400, message: expect.stringContaining('quantity') },
    },
  ])('gets $expected.status $expected.code as a typed error for $of', async ({ petId, quantity, expected }) => {
    // Act
    const { data, error, response } = await client.PATCH('/inventory/{petId}', {
      params: { path: { petId } },
      body: { quantity },
    });
    // Assess
    expect(data).toBeUndefined();
    expect(response.status).toBe(expected.status);
    expect(error).toMatchObject(expected);
  });

  it('gets 501 with Deprecation from the deprecated pet lookup, checked against the contract', async () => {
    // Prepare
    const checkedBefore = checked;
    // Act
    const { error, response } = await client.GET('/pets/{petId}', { params: { path: { petId: 1n } } });
    // Assess
    expect(response.status).toBe(501);
    expect(error?.code).toBe('NOT_IMPLEMENTED');
    expect(response.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(checked).toBe(checkedBefore + 1);
  });

  it('serves the docs page and the contract it shows, with nothing loaded from elsewhere', async () => {
    // Act
    const page = await fetch(`${started.origin}/docs`);
    const html = await page.text();
    const contract = await fetch(`${started.origin}/docs/openapi.yaml`);
    const bundle = await fetch(`${started.origin}/docs/swagger-ui-bundle.js`);
    // Assess
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).toContain('/docs/swagger-ui-bundle.js');
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(contract.status).toBe(200);
    expect(await contract.text()).toBe(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });

  it('passes the deploy self-check, which writes keys of its own to the keys table and deletes them', async () => {
    // Prepare: the self-check function as a stage runs it, over npm start's keys table.
    const dynamo = npmStartDynamo();
    const keys = new ApiKeyAdminTable({ client: dynamo, tableName: LOCAL_TABLE_NAMES.apiKeys });
    try {
      const keysBefore = await keys.list();
      // Act
      const report = await createSelfCheck({ keys, baseUrl: started.baseUrl, settleMs: 0 })(
        undefined,
        aLambdaContext(),
      );
      // Assess: every deploy check passed, in order.
      expect(report.passed).toEqual(CHECKS.map(({ name }) => name));
      expect(await keys.list()).toEqual(keysBefore);
    } finally {
      dynamo.destroy();
    }
  });

  // The burst itself is a load test (test/load/throttling-npm-start.test.ts): it needs 80 requests within a second.
  it("applies staging's throttling by default, and says so when it starts", () => {
    expect(started.output()).toContain('Throttling: 20 requests/s, burst 40, per method');
  });
});

const ROUTE = '/inventory/changes';

/** A delivery's pets, apart from the demo inventory npm start seeds. */
const DELIVERY_PETS = [
  { petId: '800001', quantity: 4, status: 'available' as const },
  { petId: '800002', quantity: 2, status: 'available' as const },
  { petId: '9223372036854775806', quantity: 1, status: 'pending' as const },
];

// Ten requests, well within the burst (40 per method) of the throttling this npm start applies.
describe('End to end: npm start applies a delivery in one POST /inventory/changes', () => {
  let dynamo: DynamoDBClient;

  beforeAll(async () => {
    dynamo = npmStartDynamo();
    await putItems(dynamo, LOCAL_TABLE_NAMES.inventory, DELIVERY_PETS);
  });

  afterAll(() => dynamo?.destroy());

  const post = (body: string, key = started.apiKey, headers: Record<string, string> = {}) =>
    call(started.baseUrl, 'POST', '/inventory/changes', {
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers },
      body,
      route: ROUTE,
    });
  const inventory = () => snapshotTable(dynamo, LOCAL_TABLE_NAMES.inventory);

  it('answers a three-change delivery 200 with every entry as stored, in request order', async () => {
    const response = await post(
      JSON.stringify({
        changes: [
          { petId: 800002, adjustBy: 3, reason: 'received', reference: 'delivery 4411' },
          { petId: 800001, quantity: 0, expectedQuantity: 4, reason: 'sold' },
        ],
      }).replace(']}', ',{"petId":9223372036854775806,"adjustBy":2,"reason":"received"}]}'),
    );
    expect(response.status).toBe(200);
    expect(response.text).toBe(
      '{"items":[{"petId":800002,"quantity":5,"status":"available"},{"petId":800001,"quantity":0,"status":"available"},' +
        '{"petId":9223372036854775806,"quantity":3,"status":"pending"}]}',
    );
  });

  it('answers 409 and leaves every entry as it was when the last change would go below zero', async () => {
    const before = await inventory();
    const response = await post(
      '{"changes":[{"petId":800002,"adjustBy":1},{"petId":9223372036854775806,"adjustBy":1},{"petId":800001,"adjustBy":-1}]}',
    );
    expect(response.status).toBe(409);
    expect((response.json as { message: string }).message).toMatch(/^changes\[2\] \(petId 800001\): /);
    expect(await inventory()).toBe(before);
  });

  it.each([
    ['a duplicate petId', '{"changes":[{"petId":800002,"adjustBy":1},{"petId":800002,"adjustBy":1}]}'],
    ['0 changes', '{"changes":[]}'],
    [
      '101 changes',
      JSON.stringify({ changes: Array.from({ length: 101 }, (_, i) => ({ petId: 800100 + i, adjustBy: 1 })) }),
    ],
    ['an unknown reason', '{"changes":[{"petId":800002,"adjustBy":1,"reason":"arrived"}]}'],
  ])('answers %s 400 VALIDATION_FAILED and changes nothing', async (_name, body) => {
    const before = await inventory();
    const response = await post(body);
    expect(response.status).toBe(400);
    expect((response.json as { code: string }).code).toBe('VALIDATION_FAILED');
    expect(await inventory()).toBe(before);
  });

  it('replays a batch resent with its Idempotency-Key and applies it once', async () => {
    const key = crypto.randomUUID();
    const send = () =>
      post('{"changes":[{"petId":800002,"adjustBy":10,"reason":"received"}]}', started.apiKey, {
        'Idempotency-Key': key,
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(first.text).toBe('{"items":[{"petId":800002,"quantity":15,"status":"available"}]}');
  });

  it("answers a read key's batch 403 ACCESS_DENIED and changes nothing", async () => {
    const { key, record } = generateApiKey('display', new Date(), 'read');
    await new ApiKeyTable({ client: dynamo, tableName: LOCAL_TABLE_NAMES.apiKeys }).create(record);
    const before = await inventory();
    const response = await post('{"changes":[{"petId":800002,"adjustBy":1}]}', key);
    expect(response.status).toBe(403);
    expect((response.json as { code: string }).code).toBe('ACCESS_DENIED');
    expect(await inventory()).toBe(before);
  });

  it('answers GET /inventory/changes 405 with Allow: POST', async () => {
    const response = await call(started.baseUrl, 'GET', '/inventory/changes', {
      headers: { Authorization: `Bearer ${started.apiKey}` },
      route: ROUTE,
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('End to end: npm start stops', () => {
  // Last in the file: it stops the process every test above used.
  it(
    'stops on SIGINT with exit code 0 and stops DynamoDB Local',
    async () => {
      // Act
      const outcome = await started.stop(EXIT_TIMEOUT_MS);
      // Assess
      expect(outcome).toEqual({ code: 0, signal: null });
      expect(started.output()).toContain('SIGINT: stopping the gateway and DynamoDB Local');
      expect(await portAccepts(started.dynamoPort)).toBe(false);
    },
    EXIT_TIMEOUT_MS + 5_000,
  );
});
