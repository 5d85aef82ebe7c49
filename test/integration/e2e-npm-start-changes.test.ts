import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { generateApiKey } from '../../functions/api-keys/key';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { LOCAL_TABLE_NAMES } from '../../service/local-dynamodb';
import { type LocalApiProcess, startLocalApiProcess } from '../helpers/api-process';
import { call } from '../helpers/http';
import { putItems, snapshotTable } from '../helpers/local-stack';

const READY_TIMEOUT_MS = 90_000;
const ROUTE = '/inventory/changes';

/** A delivery's pets, apart from the demo inventory npm start seeds. */
const DELIVERY_PETS = [
  { petId: '800001', quantity: 4, status: 'available' as const },
  { petId: '800002', quantity: 2, status: 'available' as const },
  { petId: '9223372036854775806', quantity: 1, status: 'pending' as const },
];

describe('End to end: npm start applies a delivery in one POST /inventory/changes', () => {
  let started: LocalApiProcess;
  let dynamo: DynamoDBClient;

  beforeAll(async () => {
    started = await startLocalApiProcess({ readyTimeoutMs: READY_TIMEOUT_MS, env: { PETSTORE_RATE_LIMIT: '0' } });
    dynamo = createDynamoClient({
      endpoint: started.dynamoEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await putItems(dynamo, LOCAL_TABLE_NAMES.inventory, DELIVERY_PETS);
  }, READY_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    dynamo?.destroy();
    await started?.stop();
  });

  const post = (body: string, key = started.apiKey) =>
    call(started.baseUrl, 'POST', '/inventory/changes', {
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
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
      call(started.baseUrl, 'POST', '/inventory/changes', {
        headers: {
          Authorization: `Bearer ${started.apiKey}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': key,
        },
        body: '{"changes":[{"petId":800002,"adjustBy":10,"reason":"received"}]}',
        route: ROUTE,
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
