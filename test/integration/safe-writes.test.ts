import { GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { run } from '../../cli/run';
import { generateApiKey } from '../../functions/api-keys/key';
import { createHandler as createUpdateHandler } from '../../functions/handlers/update-inventory';
import { createIdempotentRunner } from '../../functions/http/idempotency';
import { jsonResponse } from '../../functions/http/responses';
import { type InventoryItem, REPEATED_CHANGE_WINDOW_SECONDS } from '../../functions/inventory/types';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { idempotencyTable } from '../../functions/store/idempotency-table';
import { InventoryTable } from '../../functions/store/inventory-table';
import { inventoryUpdateEvent, lambdaContext } from '../../local/lambda/events';
import { BODY_OVER_GATEWAY_LIMIT } from '../../service/gateway-responses';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { call, jsonHeaders } from '../helpers/http';
import {
  freshTables,
  putItems,
  snapshotTable,
  startTestStack,
  type TestStack,
  testClient,
  testEndpoint,
} from '../helpers/local-stack';
import { serveOnLoopback } from '../helpers/loopback-server';
import { startThrottlingEndpoint } from '../helpers/throttling-endpoint';

const ROUTE = '/inventory/{petId}';

const INVENTORY: readonly InventoryItem[] = [
  { petId: '1', quantity: 12, status: 'available' },
  { petId: '2', quantity: 3, status: 'pending' },
  { petId: '3', quantity: 0, status: 'sold' },
  { petId: '9223372036854775807', quantity: 2, status: 'pending' },
  ...Array.from({ length: 25 }, (_, i) => ({ petId: String(500 + i), quantity: 0, status: 'available' as const })),
  // The quoted-key test's own pet.
  { petId: '600', quantity: 0, status: 'available' },
];

// One stack per file: the handlers build their table adapters once per process, as a Lambda container does.
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ inventory: INVENTORY });
});
afterAll(async () => {
  await stack.close();
});

const get = (petId: string, headers: Record<string, string> = stack.authHeader) =>
  call(stack.url, 'GET', `/inventory/${petId}`, { headers, route: ROUTE });
/** A JSON PATCH with the write key, unless `headers` (an Authorization among them) say otherwise. */
const patch = (petId: string, body: string, headers: Record<string, string> = {}) =>
  call(stack.url, 'PATCH', `/inventory/${petId}`, {
    headers: { ...jsonHeaders(stack.authHeader), ...headers },
    body,
    route: ROUTE,
  });
const quantityOf = async (petId: string) => ((await get(petId)).json as { quantity: number }).quantity;

/** Runs `act`, asserting it left the inventory table as it found it, and returns what `act` returned. */
async function leavingInventoryUnchanged<T>(act: () => Promise<T>): Promise<T> {
  const before = await snapshotTable(stack.client, stack.tables.inventory);
  const result = await act();
  expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
  return result;
}

describe('API: read one entry, adjust it, retry safely (local gateway, DynamoDB Local)', () => {
  describe('GET /inventory/{petId}', () => {
    it('answers 200 with the entry, every digit of an int64 petId kept', async () => {
      const response = await get('9223372036854775807');
      expect(response.status).toBe(200);
      expect(response.text).toBe('{"petId":9223372036854775807,"quantity":2,"status":"pending","version":1}');
      expect(response.headers.get('cache-control')).toBe('no-store');
    });

    it('answers 404 NOT_FOUND for a pet without an entry', async () => {
      const response = await get('424242');
      expect(response.status).toBe(404);
      expect(response.json).toEqual({
        code: 'NOT_FOUND',
        message: 'No inventory entry exists for petId 424242.',
        status: 404,
      });
    });

    // The petId rules: test/unit/pet-id.test.ts.
    it('answers 400 VALIDATION_FAILED for a petId that is not an int64', async () => {
      const response = await get('abc');
      expect(response.status).toBe(400);
      expect(response.json).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    });
  });

  describe('PATCH {"adjustBy": n}', () => {
    it('adds the delta to the stored quantity and answers the entry as stored', async () => {
      const response = await patch('2', '{"adjustBy":4}');
      expect(response.status).toBe(200);
      expect(response.text).toBe('{"petId":2,"quantity":7,"status":"pending","version":2}');
      const back = await patch('2', '{"adjustBy":-4}');
      expect(back.text).toBe('{"petId":2,"quantity":3,"status":"pending","version":3}');
    });

    it('answers 409 CONFLICT naming the current quantity and changes nothing when the stock would go below 0', async () => {
      const response = await leavingInventoryUnchanged(() => patch('2', '{"adjustBy":-4}'));
      expect(response.status).toBe(409);
      expect(response.json).toEqual({
        code: 'CONFLICT',
        message:
          'The stored quantity of petId 2 is 3; adjusting it by -4 would take it below 0, so nothing was changed.',
        status: 409,
      });
    });

    it('answers 409 and changes nothing when the stock would pass 2147483647', async () => {
      const response = await leavingInventoryUnchanged(() => patch('1', '{"adjustBy":2147483636}'));
      expect(response.status).toBe(409);
      expect((response.json as { message: string }).message).toMatch(/is 12; .* above 2147483647/);
    });

    it('answers 404 for a pet without an entry and creates none', async () => {
      const response = await leavingInventoryUnchanged(() => patch('424242', '{"adjustBy":1}'));
      expect(response.status).toBe(404);
    });

    it('applies 16 clients x 5 simultaneous {"adjustBy":1} exactly: every answer 200, the stock up by 80', async () => {
      const start = await quantityOf('3');
      const client = async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) statuses.push((await patch('3', '{"adjustBy":1}')).status);
        return statuses;
      };
      const statuses = (await Promise.all(Array.from({ length: 16 }, client))).flat();
      expect(statuses).toEqual(Array(80).fill(200));
      expect(await quantityOf('3')).toBe(start + 80);
    });
  });

  describe('PATCH with Idempotency-Key', () => {
    let keyNumber = 0;
    const newKey = () => `test-key-${++keyNumber}-${Date.now()}`;
    const withKey = (key: string) => ({ 'Idempotency-Key': key });

    it('answers a repeat with the first answer and Idempotent-Replayed: true, applying the change once', async () => {
      const key = newKey();
      const start = await quantityOf('1');
      const first = await patch('1', '{"adjustBy":2}', withKey(key));
      const repeat = await patch('1', '{"adjustBy":2}', withKey(key));
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(repeat.status).toBe(first.status);
      expect(repeat.text).toBe(first.text);
      expect(repeat.headers.get('idempotent-replayed')).toBe('true');
      expect(repeat.headers.get('cache-control')).toBe('no-store');
      expect(await quantityOf('1')).toBe(start + 2);
    });

    it("takes the IETF draft's quoted key and the bare key as one key: the repeat replays, the change applies once", async () => {
      const key = newKey();
      const start = await quantityOf('600');
      const quoted = await patch('600', '{"adjustBy":1}', withKey(`"${key}"`));
      const bare = await patch('600', '{"adjustBy":1}', withKey(key));
      expect(quoted.status).toBe(200);
      expect(bare.headers.get('idempotent-replayed')).toBe('true');
      expect(bare.text).toBe(quoted.text);
      expect(await quantityOf('600')).toBe(start + 1);
    });

    it('treats the same body written differently (spacing, member order) as the same request', async () => {
      const key = newKey();
      await patch('1', '{"quantity":20,"expectedQuantity":14}', withKey(key));
      const repeat = await patch('1', '{ "expectedQuantity" : 14, "quantity" : 20 }', withKey(key));
      expect(repeat.status).toBe(200);
      expect(repeat.headers.get('idempotent-replayed')).toBe('true');
      expect(await quantityOf('1')).toBe(20);
    });

    it('answers 422 IDEMPOTENCY_KEY_REUSED to the same key with another body or another petId, and changes nothing', async () => {
      const key = newKey();
      await patch('1', '{"adjustBy":1}', withKey(key));
      const refusals = await leavingInventoryUnchanged(async () => [
        await patch('1', '{"adjustBy":5}', withKey(key)),
        await patch('2', '{"adjustBy":1}', withKey(key)),
      ]);
      for (const response of refusals) {
        expect(response.status).toBe(422);
        expect(response.json).toEqual({
          code: 'IDEMPOTENCY_KEY_REUSED',
          message:
            'This Idempotency-Key was first used with another request (petId or body); send a new key with a new request.',
          status: 422,
        });
      }
      // The refusals left the first answer in place.
      expect((await patch('1', '{"adjustBy":1}', withKey(key))).headers.get('idempotent-replayed')).toBe('true');
    });

    it('keeps a refusal as the first answer: a repeat of a 409 is the same 409, even after the stock changed', async () => {
      const key = newKey();
      const first = await patch('2', '{"adjustBy":-10}', withKey(key));
      await patch('2', '{"adjustBy":20}');
      const repeat = await patch('2', '{"adjustBy":-10}', withKey(key));
      expect(first.status).toBe(409);
      expect(repeat.status).toBe(409);
      expect(repeat.text).toBe(first.text);
      expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    });

    it('scopes keys per API key: another client with the same Idempotency-Key applies its own change', async () => {
      const key = newKey();
      const other = await stack.createKey('other-client');
      const start = await quantityOf('1');
      await patch('1', '{"adjustBy":1}', withKey(key));
      const theirs = await patch('1', '{"adjustBy":1}', { ...withKey(key), Authorization: `Bearer ${other.key}` });
      expect(theirs.status).toBe(200);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      expect(await quantityOf('1')).toBe(start + 2);
    });

    // The key's rules: test/unit/idempotency.test.ts.
    it('answers 400 VALIDATION_FAILED to an Idempotency-Key that is not ASCII, and changes nothing', async () => {
      const response = await leavingInventoryUnchanged(() => patch('1', '{"adjustBy":1}', withKey('clé-1')));
      expect(response.status).toBe(400);
      expect((response.json as { message: string }).message).toMatch(/Idempotency-Key must be/);
    });

    it('applies exactly 25 adjustments when each is sent twice at once under its own key; answers 200 or 409 only', async () => {
      const pets = Array.from({ length: 25 }, (_, i) => String(500 + i));
      const sends = pets.flatMap((petId) => {
        const key = newKey();
        return [patch(petId, '{"adjustBy":1}', withKey(key)), patch(petId, '{"adjustBy":1}', withKey(key))];
      });
      const responses = await Promise.all(sends);
      for (const response of responses) expect([200, 409]).toContain(response.status);
      for (const response of responses.filter((r) => r.status === 409))
        expect(response.headers.get('retry-after')).toBe('1');
      const quantities = await Promise.all(pets.map(quantityOf));
      expect(quantities).toEqual(Array(25).fill(1));
    });
  });
});

describe('API: keys that may only read (local gateway evaluating the authorizer policy)', () => {
  let readKey: Record<string, string>;

  beforeAll(async () => {
    const { key, record } = generateApiKey('display', new Date(), 'read');
    await new ApiKeyTable({ client: stack.client, tableName: stack.tables.apiKeys }).create(record);
    readKey = { Authorization: `Bearer ${key}` };
  });

  it('lists the inventory and reads one entry with a read key', async () => {
    const list = await call(stack.url, 'GET', '/inventory', { headers: readKey, route: '/inventory' });
    const one = await get('1', readKey);
    expect(list.status).toBe(200);
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ petId: 1, status: 'available' });
  });

  // API Gateway answers a call the authorizer's policy does not allow with the ACCESS_DENIED gateway response (403):
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-output.html
  it("answers a read key's PATCH with 403 ACCESS_DENIED and the Error body, and changes nothing", async () => {
    const response = await leavingInventoryUnchanged(() => patch('1', '{"quantity":0}', readKey));
    expect(response.status).toBe(403);
    expect(response.json).toMatchObject({ code: 'ACCESS_DENIED', status: 403 });
  });

  it('keeps the read policy per key: after a read key was refused, a write key still writes, and the other way round', async () => {
    const refused = await patch('1', '{"adjustBy":1}', readKey);
    const written = await patch('1', '{"adjustBy":1}');
    const refusedAgain = await patch('1', '{"adjustBy":1}', readKey);
    expect([refused.status, written.status, refusedAgain.status]).toEqual([403, 200, 403]);
  });
});

describe('CLI: inventory get', () => {
  const cli = async (argv: string[]) => {
    const io = aCapturedIo({ env: {} });
    const code = await run(argv, io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };

  it('prints one entry as JSON with every digit of its petId', async () => {
    const outcome = await cli(['inventory', 'get', '9223372036854775807', '--url', stack.url, '--key', stack.key]);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe('{"petId":9223372036854775807,"quantity":2,"status":"pending","version":1}\n');
  });

  it('exits 1 naming the 404 for a pet without an entry', async () => {
    const outcome = await cli(['inventory', 'get', '424242', '--url', stack.url, '--key', stack.key]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/answered 404 NOT_FOUND: No inventory entry exists for petId 424242\./);
  });

  it("exits 1 quoting an answer that is not an Error body (API Gateway's own plain-text 413) instead of undefined", async () => {
    // Prepare: a stand-in for the stage answering as API Gateway does past its size limits.
    const server = await serveOnLoopback((_req, res) => {
      res.writeHead(BODY_OVER_GATEWAY_LIMIT.status, BODY_OVER_GATEWAY_LIMIT.headers);
      res.end(BODY_OVER_GATEWAY_LIMIT.body);
    });
    try {
      // Act
      const outcome = await cli(['inventory', 'get', '-1', '--url', `${server.url}/v1`, '--key', stack.key]);
      // Assess
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toContain(`answered 413, not an Error body: ${BODY_OVER_GATEWAY_LIMIT.body}`);
      expect(outcome.stderr).not.toContain('undefined');
    } finally {
      await server.close();
    }
  });
});

describe('Function: the idempotent runner on DynamoDB Local', () => {
  const client = testClient();
  let tableName: string;
  const request = { keyId: 'key_1', idempotencyKey: 'k-1', request: { petId: '1', adjustBy: 1 } };

  beforeAll(async () => {
    tableName = (await freshTables(client)).idempotency as string;
  });
  afterAll(() => client.destroy());

  const runner = () =>
    createIdempotentRunner({ persistenceStore: idempotencyTable({ client, tableName }), operation: 'test' });
  const ok = (body: string): APIGatewayProxyResult => jsonResponse(200, body);

  it('answers a repeat in flight 409 with Retry-After, and the first request keeps its claim and its answer', async () => {
    // Prepare
    const run = runner();
    let finish: (response: APIGatewayProxyResult) => void = () => undefined;
    const first = run(
      { ...request, idempotencyKey: 'in-flight' },
      lambdaContext(),
      () => new Promise((resolve) => (finish = resolve)),
    );
    await waitForClaim();
    // Act
    const duplicate = await run({ ...request, idempotencyKey: 'in-flight' }, lambdaContext(), async () =>
      ok('"again"'),
    ).catch((error: unknown) => error);
    finish(ok('"first"'));
    const answer = await first;
    const replay = await run({ ...request, idempotencyKey: 'in-flight' }, lambdaContext(), async () => ok('"again"'));
    // Assess
    expect(duplicate).toMatchObject({ code: 'CONFLICT', options: { headers: { 'Retry-After': '1' } } });
    expect(answer.body).toBe('"first"');
    expect(replay.body).toBe('"first"');
    expect(replay.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
  });

  it('keeps the first answer 24 hours (the TTL attribute), under a hash that never holds the key in clear', async () => {
    const before = Math.floor(Date.now() / 1000);
    await runner()({ ...request, idempotencyKey: 'ttl-secret' }, lambdaContext(), async () => ok('"kept"'));
    const after = Math.ceil(Date.now() / 1000);
    const { Items = [] } = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
    const rows = Items.filter((item) => JSON.stringify(item).includes('kept'));
    expect(rows).toHaveLength(1);
    const expiration = Number(rows[0]?.expiration?.N);
    expect(expiration).toBeGreaterThanOrEqual(before + REPEATED_CHANGE_WINDOW_SECONDS);
    expect(expiration).toBeLessThanOrEqual(after + REPEATED_CHANGE_WINDOW_SECONDS);
    expect(JSON.stringify(rows[0])).not.toContain('ttl-secret');
  });

  /**
   * The first call's time-out, so its claim's life: the test waits it out. Room for that call and the one sent while
   * it is claimed on a busy machine, nothing more.
   */
  const CLAIM_MS = 3000;

  /**
   * Pet `petId` at 10 behind the update handler, where `throttled` (its idempotency store or its inventory table)
   * refuses its first UpdateItem, with no retry; requests go under one Idempotency-Key.
   */
  async function updateHandlerThrottling(petId: string, throttled: 'idempotency' | 'inventory') {
    const tables = await freshTables(client);
    await putItems(client, tables.inventory, [{ petId, quantity: 10, status: 'available' }]);
    const endpoint = await startThrottlingEndpoint(
      testEndpoint(),
      (operation, index) => operation === 'UpdateItem' && index === 0,
    );
    const throttledClient = testClient({ endpoint: endpoint.url, maxAttempts: 1 });
    const clientOf = (table: typeof throttled) => (table === throttled ? throttledClient : client);
    const notKept: Error[] = [];
    const handler = createUpdateHandler({
      repository: new InventoryTable({ client: clientOf('inventory'), tableName: tables.inventory }),
      idempotent: createIdempotentRunner({
        persistenceStore: idempotencyTable({
          client: clientOf('idempotency'),
          tableName: tables.idempotency as string,
        }),
        operation: 'updateInventory',
        onAnswerNotKept: (error) => notKept.push(error),
      }),
    });
    const send = (body: string, context = lambdaContext()) =>
      handler(
        inventoryUpdateEvent(petId, body, {
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `throttled-${throttled}` },
        }),
        context,
      );
    const stored = async () => {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: tables.inventory, Key: { petId: { N: petId } }, ConsistentRead: true }),
      );
      return Number(Item?.quantity?.N);
    };
    const throttledCalls = () => endpoint.calls.filter((call) => call.throttled).map((call) => call.operation);
    const close = async () => {
      throttledClient.destroy();
      await endpoint.close();
    };
    return { send, stored, throttledCalls, close, notKept };
  }

  /**
   * Pet 77 behind a store that cannot keep the first answer. The first call's claim lasts its deadline (CLAIM_MS);
   * one attempt per store call, so no back-off comes near it (middy would answer for the function at its time-out).
   */
  async function answerNotKept() {
    const update = await updateHandlerThrottling('77', 'idempotency');
    /** Sends the first request, whose answer is not kept, and waits until its claim has lapsed. */
    const firstThenClaimLapse = async (body: string) => {
      const claimEnds = Date.now() + CLAIM_MS;
      const first = await update.send(body, lambdaContext({ timeoutMs: CLAIM_MS }));
      const quantityAfterFirst = await update.stored();
      const whileClaimed = await update.send(body);
      await new Promise((resolve) => setTimeout(resolve, claimEnds + 100 - Date.now()));
      return { first, quantityAfterFirst, whileClaimed };
    };
    return { ...update, firstThenClaimLapse };
  }

  it('gives the first answer even when it could not be kept (200, applied once), then 409 while its claim lasts, then the entry as that change left it', async () => {
    const { send, stored, throttledCalls, firstThenClaimLapse, close, notKept } = await answerNotKept();
    try {
      // Act
      const { first, quantityAfterFirst, whileClaimed } = await firstThenClaimLapse('{"adjustBy":5}');
      const afterClaim = await send('{"adjustBy":5}');
      const replay = await send('{ "adjustBy": 5 }');
      // Assess
      expect(throttledCalls()).toEqual(['UpdateItem']);
      // The change landed and its answer is known: the client gets it, not a 503 that would send it to retry.
      expect(first.statusCode).toBe(200);
      expect(JSON.parse(first.body)).toEqual({ petId: 77, quantity: 15, status: 'available', version: 2 });
      expect(first.headers).not.toHaveProperty('Idempotent-Replayed');
      expect(notKept).toHaveLength(1);
      expect(quantityAfterFirst).toBe(15);
      expect(whileClaimed.statusCode).toBe(409);
      expect(whileClaimed.headers).toMatchObject({ 'Retry-After': '1' });
      expect(afterClaim.statusCode).toBe(200);
      expect(JSON.parse(afterClaim.body)).toEqual({ petId: 77, quantity: 15, status: 'available', version: 2 });
      expect(replay.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
      expect(replay.body).toBe(afterClaim.body);
      expect(await stored()).toBe(15);
    } finally {
      await close();
    }
  });

  it('applies another body sent under that key after the claim lapsed as a change of its own, never as the first', async () => {
    const { send, stored, firstThenClaimLapse, close } = await answerNotKept();
    try {
      await firstThenClaimLapse('{"adjustBy":5}');
      const other = await send('{"adjustBy":7}');
      expect(other.statusCode).toBe(200);
      expect(JSON.parse(other.body)).toEqual({ petId: 77, quantity: 22, status: 'available', version: 3 });
      expect(await stored()).toBe(22);
    } finally {
      await close();
    }
  });

  it('keeps no 5xx under an Idempotency-Key: a 503 while the inventory write fails, then a repeat applies the change once (200, not replayed), then a third replays it', async () => {
    // Prepare: the inventory table refuses the first write; the idempotency store answers normally.
    const { send, stored, throttledCalls, close, notKept } = await updateHandlerThrottling('78', 'inventory');
    try {
      // Act
      const failed = await send('{"adjustBy":5}');
      const repeat = await send('{"adjustBy":5}');
      const third = await send('{"adjustBy":5}');
      // Assess
      expect(throttledCalls()).toEqual(['UpdateItem']);
      expect(failed.statusCode).toBe(503);
      expect(JSON.parse(failed.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect(repeat.statusCode).toBe(200);
      expect(JSON.parse(repeat.body)).toEqual({ petId: 78, quantity: 15, status: 'available', version: 2 });
      expect(repeat.headers).not.toHaveProperty('Idempotent-Replayed');
      expect(third.statusCode).toBe(200);
      expect(third.body).toBe(repeat.body);
      expect(third.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
      expect(await stored()).toBe(15);
      expect(notKept).toEqual([]);
    } finally {
      await close();
    }
  });

  /** Waits for the claim the first call writes before it runs its operation: an event, not a time. */
  async function waitForClaim(): Promise<void> {
    for (;;) {
      const { Items = [] } = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
      if (Items.some((item) => item.status?.S === 'INPROGRESS')) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
});
