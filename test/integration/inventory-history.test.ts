import type { HistoryEntry } from '../../client/index';
import type { ChangeOrigin, InventoryChange } from '../../functions/inventory/types';
import { InventoryTable } from '../../functions/store/inventory-table';
import { call, type TestResponse } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/local-stack';

const ROUTE = '/inventory/{petId}/history';
const LARGEST_PET_ID = '9223372036854775807';

/**
 * `GET /inventory/{petId}/history` through the local gateway, over rows the history function wrote from the inventory
 * table's stream after real writes (the store's own applyChange, signed as the API signs a change). Every answer is
 * checked against openapi.yaml by call().
 */
describe('GET /inventory/{petId}/history (listInventoryHistory)', () => {
  let stack: TestStack;
  let inventory: InventoryTable;
  let changes = 0;

  beforeAll(async () => {
    stack = await startTestStack({ history: true });
    inventory = new InventoryTable({ client: stack.client, tableName: stack.tables.inventory });
  }, 30_000);
  afterAll(() => stack?.close());

  const get = (path: string, headers = stack.authHeader) => call(stack.url, 'GET', path, { headers, route: ROUTE });
  const change = (petId: string, what: InventoryChange, note: Partial<ChangeOrigin> = {}) =>
    inventory.applyChange(petId, what, {
      source: 'api',
      actor: 'key_test',
      requestId: `req-${++changes}`,
      at: new Date().toISOString(),
      ...note,
    });
  /** The first page once it holds `count` changes: the history is written from the stream, within seconds. */
  const historyOf = async (petId: string, count: number, query = ''): Promise<TestResponse> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const response = await get(`/inventory/${petId}/history${query}`);
      const found = response.status === 200 ? (response.json as unknown[]).length : 0;
      if (found >= count) return response;
      if (Date.now() > deadline) throw new Error(`history of ${petId}: ${found} of ${count} changes`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('answers the changes newest first, each with its reason and reference, null where the change gave none', async () => {
    // Prepare: pet 1 was created with 12.
    await change('1', { adjustBy: 3 }, { adjustBy: 3, reason: 'received', reference: 'delivery 4411' });
    await change('1', { quantity: 14, expectedQuantity: 15 }, { reason: 'sold' });
    await change('1', { quantity: 13 }, { requestId: undefined });
    // Act
    const response = await historyOf('1', 4);
    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('link')).toBeNull();
    const entries = response.json as HistoryEntry[];
    expect(entries.map((entry) => [entry.previousQuantity, entry.quantity, entry.reason, entry.reference])).toEqual([
      [14, 13, null, null],
      [15, 14, 'sold', null],
      [12, 15, 'received', 'delivery 4411'],
      [null, 12, null, null],
    ]);
    expect(entries[0]).toMatchObject({ source: 'api', actor: 'key_test', requestId: null });
    expect(entries[0]).not.toHaveProperty('adjustBy');
    expect(entries[2]).toMatchObject({ adjustBy: 3, requestId: 'req-1', status: 'available' });
    // The creation: written outside the API, so nobody is credited and nothing came before.
    expect(entries[3]).toMatchObject({ source: 'unknown', actor: 'unknown', previousStatus: null, requestId: null });
    const times = entries.map((entry) => entry.at);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('pages 250 changes with limit=100 into 100, 100 and 50, newest first, the last page without a Link', async () => {
    // Prepare: the largest int64 pet, created with 2, then 249 adjustments of +1.
    for (let i = 0; i < 249; i++) await change(LARGEST_PET_ID, { adjustBy: 1 }, { adjustBy: 1 });
    await historyOf(LARGEST_PET_ID, 250, '?limit=1000');
    // Act
    const pages: TestResponse[] = [];
    let next: string | undefined = `/inventory/${LARGEST_PET_ID}/history?limit=100`;
    while (next !== undefined) {
      const response = await get(next);
      pages.push(response);
      const link = response.headers.get('link');
      const target = link?.match(/^<\/v1([^>]+)>; rel="next"$/)?.[1];
      if (link !== null) expect(target).toBeDefined();
      next = target;
    }
    // Assess
    expect(pages.map((page) => page.status)).toEqual([200, 200, 200]);
    expect(pages.map((page) => (page.json as unknown[]).length)).toEqual([100, 100, 50]);
    expect(pages[0]?.headers.get('link')).toMatch(
      new RegExp(`^</v1/inventory/${LARGEST_PET_ID}/history\\?limit=100&cursor=[A-Za-z0-9_-]+>; rel="next"$`),
    );
    const quantities = pages.flatMap((page) => (page.json as HistoryEntry[]).map((entry) => entry.quantity));
    expect(quantities).toEqual(Array.from({ length: 250 }, (_, i) => 2 + 249 - i));
  }, 120_000);

  it('answers the default page of 100 changes when no limit is given', async () => {
    const response = await get(`/inventory/${LARGEST_PET_ID}/history`);
    expect(response.status).toBe(200);
    expect((response.json as unknown[]).length).toBe(100);
    expect(response.headers.get('link')).toMatch(/\?limit=100&cursor=/);
  });

  it.each([
    ['limit=0', 'limit must be an integer from 1 to 1000; got 0.'],
    ['limit=1001', 'limit must be an integer from 1 to 1000; got 1001.'],
    ['limit=-1', 'limit must be an integer from 1 to 1000; got -1.'],
    ['limit=2.5', 'limit must be an integer from 1 to 1000.'],
    ['limit=', 'limit must be an integer from 1 to 1000.'],
    ['limit=1&limit=2', 'limit must be given once.'],
  ])('answers 400 VALIDATION_FAILED for ?%s, naming limit', async (query, message) => {
    const response = await get(`/inventory/1/history?${query}`);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ code: 'VALIDATION_FAILED', message, status: 400 });
  });

  it('answers 400 VALIDATION_FAILED naming cursor for any cursor this API did not give', async () => {
    // Prepare: a cursor the API gave, then that cursor altered in every way a client might.
    const first = await get('/inventory/1/history?limit=1');
    const cursor = first.headers.get('link')?.match(/cursor=([A-Za-z0-9_-]+)>/)?.[1] ?? '';
    expect(cursor).not.toBe('');
    const refused = [
      '',
      'abc',
      `${cursor}A`,
      cursor.slice(1),
      Buffer.from('not a position').toString('base64url'),
      Buffer.from('1'.repeat(39)).toString('base64url'),
      `${cursor}&cursor=${cursor}`,
    ];
    // Act
    const responses = await Promise.all(refused.map((value) => get(`/inventory/1/history?limit=1&cursor=${value}`)));
    // Assess
    for (const response of responses) {
      expect(response.status).toBe(400);
      expect(response.json).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
      expect((response.json as { message: string }).message).toMatch(/^cursor /);
    }
    expect((await get(`/inventory/1/history?limit=1&cursor=${cursor}`)).status).toBe(200);
  });

  it('answers 404 NOT_FOUND for a pet without an inventory entry, and 400 for a petId outside int64', async () => {
    const unknown = await get('/inventory/424242/history');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({
      code: 'NOT_FOUND',
      message: 'No inventory entry exists for petId 424242.',
      status: 404,
    });
    const outside = await get('/inventory/9223372036854775808/history');
    expect(outside.status).toBe(400);
    expect(outside.json).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('answers an entry that never changed since its creation with that one change, to a read key too', async () => {
    // Prepare
    const { key } = await stack.createKey('reader', 'read');
    // Act
    const response = await historyOf('-5', 1);
    const asReader = await get('/inventory/-5/history', { Authorization: `Bearer ${key}` });
    // Assess
    expect((response.json as HistoryEntry[]).map((entry) => [entry.previousQuantity, entry.quantity])).toEqual([
      [null, 4],
    ]);
    expect(asReader.status).toBe(200);
    expect(asReader.text).toBe(response.text);
  });
});
