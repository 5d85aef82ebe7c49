import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Middleware } from 'openapi-fetch';
import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import { createInventoryClient, type InventoryClient } from '../../client/index';
import { generateApiKey } from '../../functions/api-keys/key';
import { createHandler as createSelfCheck } from '../../functions/handlers/self-check';
import { SMOKE_CHECK_NAMES } from '../../functions/self-check/checks';
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
    expect(data).toEqual({ petId: MAX_INT64, quantity: 41, status: 'pending', version: 2 });
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

  it('passes the deploy self-check, which writes a key of its own to the keys table and deletes it', async () => {
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
      // Assess: every check a deploy runs (all but the write check, which it leaves out) passed, in order.
      const { compareAndSet: _writeCheck, ...deployChecks } = SMOKE_CHECK_NAMES;
      expect(report.passed).toEqual(Object.values(deployChecks));
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
      '{"items":[{"petId":800002,"quantity":5,"status":"available","version":2},' +
        '{"petId":800001,"quantity":0,"status":"available","version":2},' +
        '{"petId":9223372036854775806,"quantity":3,"status":"pending","version":2}]}',
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
    expect(first.text).toBe('{"items":[{"petId":800002,"quantity":15,"status":"available","version":3}]}');
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

  it('answers DELETE /inventory/changes 405 with Allow: GET, POST', async () => {
    const response = await call(started.baseUrl, 'DELETE', '/inventory/changes', {
      headers: { Authorization: `Bearer ${started.apiKey}` },
      route: ROUTE,
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
  });
});

describe('End to end: a follower of the change feed through npm start', () => {
  const PETS = Array.from({ length: 10 }, (_, i) => String(900001 + i));
  let dynamo: DynamoDBClient;
  beforeAll(() => {
    dynamo = npmStartDynamo();
  });
  afterAll(() => dynamo.destroy());
  const post = (body: string) =>
    call(started.baseUrl, 'POST', '/inventory/changes', {
      headers: { Authorization: `Bearer ${started.apiKey}`, 'Content-Type': 'application/json' },
      body,
      route: '/inventory/changes',
    });
  const auth = () => ({ Authorization: `Bearer ${started.apiKey}` });
  const cursorOf = (link: string | null, rel: string) =>
    new RegExp(`cursor=([A-Za-z0-9_-]+)>; rel="${rel}"`).exec(link ?? '')?.[1];
  interface Event {
    id: string;
    petId: number;
    version: number;
    quantity: number;
    previousQuantity: number | null;
  }
  /** Sends `send` until it is not throttled; whether it applied (200) or was refused with nothing applied. */
  const applied = async (send: () => Promise<{ status: number }>): Promise<boolean> => {
    for (;;) {
      const { status } = await send();
      if (status !== 429) return status === 200;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** The feed's events from `cursor` until none is left, and the cursor after them. */
  const readFeed = async (cursor: string, limit: number) => {
    const events: Event[] = [];
    for (let next = cursor; ; ) {
      const page = await call(started.baseUrl, 'GET', `/inventory/changes?limit=${limit}&cursor=${next}`, {
        headers: auth(),
        route: '/inventory/changes',
      });
      expect(page.status).toBe(200);
      const items = (page.json as { items: Event[] }).items;
      events.push(...items);
      next = cursorOf(page.headers.get('link'), 'next') as string;
      if (items.length === 0) return { events, cursor: next };
    }
  };

  it('sees every applied change of 6 writers and 2 batchers once, each pet’s versions contiguous, its deltas its stock', async () => {
    // Prepare: the list's position, then 10 pets created (an import's creations are events too).
    const list = await call(started.baseUrl, 'GET', '/inventory?limit=1', { headers: auth(), route: '/inventory' });
    const start = cursorOf(list.headers.get('link'), 'changes') as string;
    await putItems(
      dynamo,
      LOCAL_TABLE_NAMES.inventory,
      PETS.map((petId) => ({ petId, quantity: 50, status: 'available' })),
    );
    const changes = new Map(PETS.map((petId) => [petId, 1]));
    const count = (petIds: readonly string[]) => {
      for (const petId of petIds) changes.set(petId, (changes.get(petId) ?? 0) + 1);
    };
    const pet = (i: number) => PETS[i % PETS.length] as string;

    // Act: the follower polls while the writers write.
    const events: Event[] = [];
    let writing = true;
    const follower = (async () => {
      let cursor = start;
      while (writing) {
        const read = await readFeed(cursor, 7);
        events.push(...read.events);
        cursor = read.cursor;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return cursor;
    })();
    const writer = async (w: number) => {
      for (let i = 0; i < 8; i++) {
        const petId = pet(w * 3 + i);
        const adjustBy = ((w + i) % 5) - 2 || 1;
        const body = JSON.stringify({ adjustBy, reason: 'correction' });
        const send = () =>
          call(started.baseUrl, 'PATCH', `/inventory/${petId}`, {
            headers: { ...auth(), 'Content-Type': 'application/json' },
            body,
            route: '/inventory/{petId}',
          });
        if (await applied(send)) count([petId]);
      }
    };
    const batcher = async (b: number) => {
      for (let i = 0; i < 4; i++) {
        const petIds = [pet(b + i), pet(b + i + 3), pet(b + i + 6)];
        const body = JSON.stringify({ changes: petIds.map((petId) => ({ petId: Number(petId), adjustBy: 2 })) });
        const send = () => post(body);
        if (await applied(send)) count(petIds);
      }
    };
    await Promise.all([...[0, 1, 2, 3, 4, 5].map(writer), batcher(0), batcher(1)]);
    const entries = new Map(
      await Promise.all(
        PETS.map(async (petId) => {
          const entry = await call(started.baseUrl, 'GET', `/inventory/${petId}`, {
            headers: auth(),
            route: '/inventory/{petId}',
          });
          return [petId, entry.json as { quantity: number; version: number }] as const;
        }),
      ),
    );
    const total = [...changes.values()].reduce((sum, n) => sum + n, 0);
    for (let waited = 0; events.filter((e) => PETS.includes(String(e.petId))).length < total; waited += 50) {
      if (waited > 20_000) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    writing = false;
    await follower;

    // Assess: each change once, in each pet's order, adding up to its stock and its version.
    const ours = events.filter((event) => PETS.includes(String(event.petId)));
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    for (const petId of PETS) {
      const mine = ours.filter((event) => String(event.petId) === petId);
      const entry = entries.get(petId);
      expect(mine.map((event) => event.version)).toEqual(
        Array.from({ length: changes.get(petId) ?? 0 }, (_, i) => i + 1),
      );
      expect(mine.reduce((sum, event) => sum + event.quantity - (event.previousQuantity ?? 0), 0)).toBe(
        entry?.quantity,
      );
      expect(mine.at(-1)?.version).toBe(entry?.version);
    }
    // The same range read again is the same events.
    const again = await readFeed(start, 1000);
    expect(again.events.slice(0, events.length)).toEqual(events);
  }, 120_000);
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
