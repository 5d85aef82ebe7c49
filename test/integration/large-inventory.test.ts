import { writeInventory } from '../../cli/inventory/batch-writer';
import { createInventoryClient } from '../../client/index';
import { inventoryItemJson } from '../../functions/inventory/json';
import { comparePetIds } from '../../functions/inventory/repository';
import type { InventoryItem, PetStatus } from '../../functions/inventory/types';
import { startTestStack, type TestStack } from '../helpers/local-stack';

/**
 * [large] An inventory past what one buffered Lambda response carried (6 MB): 120,000 entries with 19-digit ids,
 * ~8.6 MB of JSON, listed exactly through the local gateway with and without gzip. Selected alone with
 * `npm test -- -t '\[large\]'`; it seeds with the CLI's batch writer (~30 s of the suite).
 */
const ENTRIES = 120_000;
const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];

/** Distinct 19-digit ids spread over the int64 range, the longest ids and so the largest body. */
function largeInventory(): InventoryItem[] {
  return Array.from({ length: ENTRIES }, (_, i) => ({
    petId: String(9_223_372_036_854_775_807n - BigInt(i) * 76_861_433_640_456n),
    quantity: (i * 7919) % 2_147_483_647,
    status: STATUSES[i % 3] as PetStatus,
  }));
}

describe('[large] GET /inventory past the old 6 MB limit (streamed)', () => {
  let stack: TestStack;
  let expected: string;

  beforeAll(async () => {
    // DynamoDB Local takes seconds per Scan page of a table this size on a busy machine (DynamoDB a fraction of
    // one): the functions' per-attempt time-out, read when their client is built, is raised for this file.
    process.env.DYNAMODB_REQUEST_TIMEOUT_MS = '30000';
    stack = await startTestStack({ inventory: [] });
    const items = largeInventory();
    await writeInventory(items, { client: stack.client, tableName: stack.tables.inventory, concurrency: 8 });
    expected = `[${[...items]
      .sort((a, b) => comparePetIds(a.petId, b.petId))
      .map(inventoryItemJson)
      .join(',')}]`;
  }, 240_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('lists every entry exactly and in petId order without compression, past 6 MB', async () => {
    // Act
    const response = await fetch(`${stack.url}/inventory`, {
      headers: { ...stack.authHeader, 'Accept-Encoding': 'identity' },
    });
    const text = await response.text();

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(Buffer.byteLength(text)).toBeGreaterThan(6 * 1024 * 1024);
    expect(text === expected).toBe(true);
  }, 60_000);

  it('lists the same bytes gzipped, which fetch decodes, in a fraction of the size', async () => {
    // Act
    const response = await fetch(`${stack.url}/inventory`, {
      headers: { ...stack.authHeader, 'Accept-Encoding': 'gzip' },
    });
    const text = await response.text();

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(text === expected).toBe(true);
  }, 60_000);

  it('reads it with the typed client, every petId exact as a bigint', async () => {
    // Act
    const { data, error } = await createInventoryClient({ baseUrl: stack.url, apiKey: stack.key }).GET('/inventory');

    // Assess
    expect(error).toBeUndefined();
    expect(data).toHaveLength(ENTRIES);
    expect(data?.[0]?.petId).toBe(9_223_372_036_854_775_807n - BigInt(ENTRIES - 1) * 76_861_433_640_456n);
    expect(data?.at(-1)?.petId).toBe(9_223_372_036_854_775_807n);
  }, 60_000);
});
