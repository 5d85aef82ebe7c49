import { randomUUID } from 'node:crypto';
import {
  applyInventoryChanges,
  createInventoryClient,
  type InventoryClient,
  inventoryHistoryPages,
} from '../../client/index';
import { HistoryTable } from '../../functions/store/history-table';
import { aHistoryEntry } from '../fixtures/builders';
import { startTestStack, type TestStack } from '../helpers/local-stack';

/** The typed client's batch and history against the local gateway, which runs the deployed handlers. */
describe('Typed client through the local gateway: applyInventoryChanges and inventoryHistoryPages', () => {
  let stack: TestStack;
  let client: InventoryClient;

  const quantityOf = async (petId: bigint) =>
    (await client.GET('/inventory/{petId}', { params: { path: { petId } } })).data?.quantity;

  beforeAll(async () => {
    stack = await startTestStack({
      inventory: [
        { petId: '9223372036854775807', quantity: 5, status: 'available' },
        { petId: '7', quantity: 2, status: 'pending' },
        { petId: '8', quantity: 0, status: 'sold' },
      ],
    });
    client = createInventoryClient({ baseUrl: stack.url, apiKey: stack.key });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('applies a batch and resolves to the entries as stored, exact ids in request order; a resend with its key is applied once', async () => {
    // Prepare
    const changes = [
      { petId: 9223372036854775807n, adjustBy: 3, reason: 'received' as const, reference: 'delivery 4411' },
      { petId: 7n, quantity: 0, expectedQuantity: 2, reason: 'sold' as const },
    ];
    const idempotencyKey = randomUUID();
    // Act
    const first = await applyInventoryChanges(client, changes, { idempotencyKey });
    const again = await applyInventoryChanges(client, changes, { idempotencyKey });
    // Assess
    const stored = [
      { petId: 9223372036854775807n, quantity: 8, status: 'available', version: 2 },
      { petId: 7n, quantity: 0, status: 'pending', version: 2 },
    ];
    expect(first).toEqual(stored);
    expect(again).toEqual(stored);
    expect(await quantityOf(9223372036854775807n)).toBe(8);
  });

  it("rejects a batch with the first failing change's 409, naming it, and applies none of it", async () => {
    // Prepare
    const before = await quantityOf(9223372036854775807n);
    // Act
    const refused = applyInventoryChanges(client, [
      { petId: 9223372036854775807n, adjustBy: 1 },
      { petId: 8n, adjustBy: -1, reason: 'loss' },
    ]);
    // Assess
    await expect(refused).rejects.toMatchObject({
      status: 409,
      error: { code: 'CONFLICT', message: expect.stringMatching(/^changes\[1\] \(petId 8\): /) },
    });
    expect(await quantityOf(9223372036854775807n)).toBe(before);
    expect(await quantityOf(8n)).toBe(0);
  });

  it('pages through 250 changes of a pet newest first with limit=100, following each rel="next" cursor', async () => {
    // Prepare: the rows the history function writes from the stream, straight into the history table.
    const history = new HistoryTable({ client: stack.client, tableName: stack.tables.history });
    for (let i = 0; i < 250; i++) {
      const entry = aHistoryEntry({ previousQuantity: i, quantity: i + 1, adjustBy: 1, reference: `delivery ${i}` });
      await history.record([{ entry, sequenceNumber: String(10n ** 20n + BigInt(i)) }]);
    }
    // Act
    const pages = [];
    for await (const page of inventoryHistoryPages(client, 9223372036854775807n, { limit: 100 })) pages.push(page);
    // Assess
    expect(pages.map((page) => page.length)).toEqual([100, 100, 50]);
    const quantities = pages.flat().map((entry) => entry.quantity);
    expect(quantities).toEqual(Array.from({ length: 250 }, (_, i) => 250 - i));
    expect(pages[0]?.[0]).toMatchObject({
      quantity: 250,
      previousQuantity: 249,
      adjustBy: 1,
      reference: 'delivery 249',
    });
  });

  it("rejects with the history's 404 for a pet without an entry", async () => {
    await expect(inventoryHistoryPages(client, 404n).next()).rejects.toMatchObject({
      status: 404,
      error: { code: 'NOT_FOUND' },
      cursor: undefined,
    });
  });
});
