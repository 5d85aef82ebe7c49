import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { generateApiKey } from '../../functions/api-keys/key';
import { createHandler } from '../../functions/handlers/apply-inventory-changes';
import { createIdempotentRunner } from '../../functions/http/idempotency';
import { MAX_BATCH_BODY_BYTES } from '../../functions/http/json-body';
import { atChange, ConcurrentChangeError } from '../../functions/inventory/errors';
import type { InventoryItem } from '../../functions/inventory/types';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { idempotencyTable } from '../../functions/store/idempotency-table';
import { InventoryTable } from '../../functions/store/inventory-table';
import { apiGatewayProxyEvent, lambdaContext } from '../../local/lambda/events';
import { assertMatchesContract } from '../helpers/contract';
import { call, jsonHeaders } from '../helpers/http';
import { snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';

const ROUTE = '/inventory/changes';

const INVENTORY: readonly InventoryItem[] = [
  ...Array.from({ length: 130 }, (_, i) => ({ petId: String(i + 1), quantity: 10, status: 'available' as const })),
  { petId: '9223372036854775807', quantity: 2, status: 'pending' },
];

// One stack per file: the handlers build their table adapters once per process, as a Lambda container does.
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ inventory: INVENTORY });
});
afterAll(async () => {
  await stack.close();
});

const post = (body: string, headers: Record<string, string> = {}) =>
  call(stack.url, 'POST', '/inventory/changes', {
    headers: { ...jsonHeaders(stack.authHeader), ...headers },
    body,
    route: ROUTE,
  });
const changes = (...list: Record<string, unknown>[]) => JSON.stringify({ changes: list });
const stored = async (petId: string) => {
  const { Item } = await stack.client.send(
    new GetItemCommand({ TableName: stack.tables.inventory, Key: { petId: { N: petId } }, ConsistentRead: true }),
  );
  return unmarshall(Item ?? {});
};
const snapshot = () => snapshotTable(stack.client, stack.tables.inventory);

describe('API: POST /inventory/changes applies a delivery all or nothing (local gateway, DynamoDB Local)', () => {
  it('answers 200 with every entry as stored, in request order, each change signed with its reason and reference', async () => {
    const response = await post(
      changes(
        { petId: 3, adjustBy: 3, reason: 'received', reference: 'delivery 4411' },
        { petId: 1, quantity: 0, expectedQuantity: 10, reason: 'sold' },
        { petId: 2, adjustBy: -4 },
      ),
    );

    expect(response.status).toBe(200);
    expect(response.text).toBe(
      '{"items":[{"petId":3,"quantity":13,"status":"available","version":2},' +
        '{"petId":1,"quantity":0,"status":"available","version":2},' +
        '{"petId":2,"quantity":6,"status":"available","version":2}]}',
    );
    expect((await stored('3')).lastChange).toMatchObject({
      source: 'api',
      adjustBy: 3,
      reason: 'received',
      reference: 'delivery 4411',
    });
    expect((await stored('1')).lastChange).toMatchObject({ reason: 'sold' });
    expect((await stored('1')).lastChange).not.toHaveProperty('adjustBy');
    expect((await stored('2')).lastChange).not.toHaveProperty('reason');
    expect((await stored('2')).lastChange).not.toHaveProperty('reference');
  });

  it('keeps every digit of an int64 petId, in and out', async () => {
    const response = await post('{"changes":[{"petId":9223372036854775807,"adjustBy":1}]}');
    expect(response.status).toBe(200);
    expect(response.text).toBe('{"items":[{"petId":9223372036854775807,"quantity":3,"status":"pending","version":2}]}');
  });

  it.each([
    {
      refusal: '409 naming changes[2] when the last change would go below zero',
      body: changes(
        { petId: 10, adjustBy: 5 },
        { petId: 11, quantity: 1 },
        { petId: 12, adjustBy: -11, reason: 'sold' },
      ),
      error: {
        code: 'CONFLICT',
        message:
          'changes[2] (petId 12): The stored quantity of petId 12 is 10; adjusting it by -11 would take it below 0, so nothing was changed.',
        status: 409,
      },
    },
    {
      refusal: '409 naming a stale expectedQuantity',
      body: changes({ petId: 13, adjustBy: 1 }, { petId: 14, quantity: 3, expectedQuantity: 9 }),
      error: {
        code: 'CONFLICT',
        message:
          'changes[1] (petId 14): The stored quantity of petId 14 is 10, not the expected 9; nothing was changed.',
        status: 409,
      },
    },
    {
      refusal: '404 naming the first unknown pet in request order',
      body: changes({ petId: 15, adjustBy: 1 }, { petId: 424242, quantity: 1 }, { petId: 16, adjustBy: -99 }),
      error: {
        code: 'NOT_FOUND',
        message: 'changes[1] (petId 424242): No inventory entry exists for petId 424242.',
        status: 404,
      },
    },
  ])('answers $refusal, without Retry-After, and leaves every entry as it was', async ({ body, error }) => {
    const before = await snapshot();
    const response = await post(body);
    expect(response.status).toBe(error.status);
    expect(response.json).toEqual(error);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(await snapshot()).toBe(before);
  });

  // Each rule of the body is tested in test/unit/update.test.ts (parseInventoryChanges).
  it('answers a petId named twice with 400 VALIDATION_FAILED naming the change, and changes nothing', async () => {
    const before = await snapshot();
    const response = await post(changes({ petId: 17, adjustBy: 1 }, { petId: 17, adjustBy: 1 }));
    expect(response.status).toBe(400);
    expect((response.json as { code: string }).code).toBe('VALIDATION_FAILED');
    expect((response.json as { message: string }).message).toMatch(
      /^changes\[1\] \(petId 17\): petId 17 is already changes\[0\]/,
    );
    expect(await snapshot()).toBe(before);
  });

  it(`takes a body of ${MAX_BATCH_BODY_BYTES} bytes, far over the PATCH's, and answers 413 one byte over`, async () => {
    const list = Array.from({ length: 100 }, (_, i) => ({
      petId: i + 20,
      adjustBy: 1,
      reason: 'received',
      reference: `delivery ${i} ${'x'.repeat(200)}`,
    }));
    const body = changes(...list);
    const padded = `${body}${' '.repeat(MAX_BATCH_BODY_BYTES - Buffer.byteLength(body))}`;
    const before = await snapshot();
    const over = await post(`${padded} `);
    expect(over.status).toBe(413);
    expect((over.json as { message: string }).message).toBe(
      `The request body is ${MAX_BATCH_BODY_BYTES + 1} bytes; the limit is ${MAX_BATCH_BODY_BYTES} bytes.`,
    );
    expect(await snapshot()).toBe(before);

    const response = await post(padded);
    expect(response.status).toBe(200);
    const items = (response.json as { items: { petId: number; quantity: number }[] }).items;
    expect(items.map(({ petId, quantity }) => [petId, quantity])).toEqual(list.map(({ petId }) => [petId, 11]));
  });
});

describe('API: POST /inventory/changes with an Idempotency-Key', () => {
  it('applies a resent batch once and replays its first answer with Idempotent-Replayed: true', async () => {
    const key = { 'Idempotency-Key': crypto.randomUUID() };
    const body = changes({ petId: 5, adjustBy: 2, reason: 'returned' }, { petId: 6, adjustBy: -1 });
    const first = await post(body, key);
    // The same request, its members in another order and spaced otherwise.
    const again = await post(
      '{ "changes": [ {"adjustBy": 2, "petId": 5, "reason": "returned"}, {"petId": 6, "adjustBy": -1} ] }',
      key,
    );

    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect((await stored('5')).quantity).toBe(12);
    expect((await stored('6')).quantity).toBe(9);
  });

  it('answers another body under the key 422 IDEMPOTENCY_KEY_REUSED, another reason included, and applies nothing', async () => {
    const key = { 'Idempotency-Key': crypto.randomUUID() };
    expect((await post(changes({ petId: 7, adjustBy: 1, reason: 'received' }), key)).status).toBe(200);
    const before = await snapshot();
    const otherReason = await post(changes({ petId: 7, adjustBy: 1, reason: 'other' }), key);
    const otherChange = await post(changes({ petId: 7, adjustBy: 2, reason: 'received' }), key);
    expect(otherReason.status).toBe(422);
    expect((otherReason.json as { code: string }).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(otherChange.status).toBe(422);
    expect(await snapshot()).toBe(before);
  });

  it('keeps a 409 as the first answer: the resend is replayed, not applied', async () => {
    const key = { 'Idempotency-Key': crypto.randomUUID() };
    const body = changes({ petId: 8, adjustBy: 1 }, { petId: 9, adjustBy: -100 });
    const first = await post(body, key);
    const again = await post(body, key);
    expect(first.status).toBe(409);
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await stored('8')).quantity).toBe(10);
  });
});

describe('Function: applyInventoryChanges when another request crosses its transaction', () => {
  it('answers 409 CONFLICT with Retry-After: 1 and keeps no answer under the key: the resend is applied', async () => {
    // Prepare: the real table, but the first transaction cancelled as DynamoDB cancels a crossed one (Local never does).
    const table = new InventoryTable({ client: stack.client, tableName: stack.tables.inventory });
    let crossed = false;
    const handler = createHandler({
      repository: {
        applyChanges: async (list, origin) => {
          if (crossed) return table.applyChanges(list, origin);
          crossed = true;
          throw atChange(new ConcurrentChangeError('124'), 1, '124');
        },
      },
      idempotent: createIdempotentRunner({
        persistenceStore: idempotencyTable({ client: stack.client, tableName: stack.tables.idempotency as string }),
        operation: 'applyInventoryChanges',
      }),
    });
    const headers = { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() };
    const send = () =>
      handler(
        apiGatewayProxyEvent({
          resource: ROUTE,
          path: ROUTE,
          httpMethod: 'POST',
          headers,
          multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
          body: changes({ petId: 123, adjustBy: 1 }, { petId: 124, adjustBy: 1 }),
        }),
        lambdaContext(),
      );

    // Act
    const first = await send();
    const resent = await send();

    // Assess
    expect(first.statusCode).toBe(409);
    expect(first.headers).toMatchObject({ 'Retry-After': '1' });
    expect(JSON.parse(first.body)).toEqual({
      code: 'CONFLICT',
      message:
        'changes[1] (petId 124): Another request changed the entry of petId 124 at the same moment, so nothing was changed; resend the request.',
      status: 409,
    });
    expect(resent.statusCode).toBe(200);
    expect(resent.headers).not.toHaveProperty('Idempotent-Replayed');
    expect(JSON.parse(resent.body)).toEqual({
      items: [
        { petId: 123, quantity: 11, status: 'available', version: 2 },
        { petId: 124, quantity: 11, status: 'available', version: 2 },
      ],
    });
    for (const answer of [first, resent])
      assertMatchesContract('POST', ROUTE, {
        status: answer.statusCode,
        headers: new Headers(answer.headers as Record<string, string>),
        text: answer.body,
        json: JSON.parse(answer.body),
      });
  });
});

describe('API: the PATCH records its reason and reference', () => {
  const patch = (petId: string, body: string, headers: Record<string, string> = {}) =>
    call(stack.url, 'PATCH', `/inventory/${petId}`, {
      headers: { ...jsonHeaders(stack.authHeader), ...headers },
      body,
      route: '/inventory/{petId}',
    });

  // The reason's rule: test/unit/update.test.ts.
  it('signs the change with them', async () => {
    const applied = await patch('121', '{"adjustBy":3,"reason":"received","reference":"delivery 4411"}');
    expect(applied.status).toBe(200);
    expect((await stored('121')).lastChange).toMatchObject({
      adjustBy: 3,
      reason: 'received',
      reference: 'delivery 4411',
    });
  });

  it('makes them part of the idempotent request: the same key with another reason is 422', async () => {
    const key = { 'Idempotency-Key': crypto.randomUUID() };
    expect((await patch('122', '{"adjustBy":1,"reason":"sold"}', key)).status).toBe(200);
    const other = await patch('122', '{"adjustBy":1,"reason":"loss"}', key);
    expect(other.status).toBe(422);
    expect((await stored('122')).quantity).toBe(11);
  });
});

describe('API: who may send a batch, and how (local gateway routing)', () => {
  it("answers a read key's batch 403 ACCESS_DENIED, and changes nothing", async () => {
    const { key, record } = generateApiKey('display', new Date(), 'read');
    await new ApiKeyTable({ client: stack.client, tableName: stack.tables.apiKeys }).create(record);
    const before = await snapshot();
    const response = await call(stack.url, 'POST', '/inventory/changes', {
      headers: jsonHeaders({ Authorization: `Bearer ${key}` }),
      body: changes({ petId: 110, adjustBy: 1 }),
      route: ROUTE,
    });
    expect(response.status).toBe(403);
    expect((response.json as { code: string }).code).toBe('ACCESS_DENIED');
    expect(await snapshot()).toBe(before);
  });

  it('answers PATCH /inventory/changes 405 with Allow: GET, POST: the static path wins over {petId}', async () => {
    const response = await call(stack.url, 'PATCH', '/inventory/changes', {
      headers: { ...stack.authHeader, 'Content-Type': 'application/json' },
      body: '{"quantity":1}',
      route: ROUTE,
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
    expect((response.json as { code: string }).code).toBe('METHOD_NOT_ALLOWED');
  });
});
