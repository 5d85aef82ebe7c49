import { randomUUID } from 'node:crypto';
import { applyInventoryChanges, createInventoryClient, type InventoryClient } from '../../client/index';
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
      { petId: 9223372036854775807n, quantity: 8, status: 'available' },
      { petId: 7n, quantity: 0, status: 'pending' },
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
});
