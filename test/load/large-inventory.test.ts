import { writeInventory } from '../../cli/inventory/batch-writer';
import { createInventoryClient } from '../../client/index';
import { inventoryItemJson } from '../../functions/inventory/json';
import type { InventoryItem, PetStatus } from '../../functions/inventory/types';
import { comparePetIds } from '../fixtures/builders';
import { startTestStack, type TestStack, testEndpoint } from '../helpers/local-stack';
import { startThrottlingEndpoint, type ThrottlingEndpoint } from '../helpers/throttling-endpoint';

/**
 * [large] An inventory past what one buffered Lambda response carried (6 MB): 100,000 entries with 19-digit ids,
 * ~7 MB of JSON (a tenth past the limit), listed exactly through the local gateway with and without gzip, with the
 * functions' default page sizes and time-outs, the first byte sent before the list's last page is read. A volume
 * test, so in the load project (`npm run test:load`, which CI runs); alone: `npm run test:load -- -t '\[large\]'`.
 * It seeds with the CLI's batch writer.
 */
const ENTRIES = 100_000;
const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];

/** Distinct 19-digit ids spread over the int64 range, the longest ids and so the largest body. */
function largeInventory(): InventoryItem[] {
  return Array.from({ length: ENTRIES }, (_, i) => ({
    petId: String(9_223_372_036_854_775_807n - BigInt(i) * 76_861_433_640_456n),
    quantity: (i * 7919) % 2_147_483_647,
    status: STATUSES[i % 3] as PetStatus,
    // A bulk load's creation (functions/store/inventory-row.ts).
    version: 1,
  }));
}

describe("[large] GET /inventory past 6 MB, a buffered Lambda answer's limit (streamed)", () => {
  let stack: TestStack;
  let expected: string;
  /** In front of DynamoDB Local for the functions (it throttles nothing): every request they send, in order. */
  let recorder: ThrottlingEndpoint;
  const queries = () => recorder.calls.filter((call) => call.operation === 'Query').length;

  beforeAll(async () => {
    stack = await startTestStack({ inventory: [] });
    recorder = await startThrottlingEndpoint(testEndpoint(), () => false);
    // Read when the functions build their client, at their first call below.
    process.env.AWS_ENDPOINT_URL_DYNAMODB = recorder.url;
    const items = largeInventory();
    await writeInventory(items, { client: stack.client, tableName: stack.tables.inventory, concurrency: 8 });
    expected = `[${[...items]
      .sort((a, b) => comparePetIds(a.petId, b.petId))
      .map(inventoryItemJson)
      .join(',')}]`;
  }, 240_000);
  afterAll(async () => {
    await stack?.close();
    await recorder?.close();
  });

  it('lists every entry exactly and in petId order without compression, past 6 MB, its first byte before its last page is read', async () => {
    // Act: read the body as it comes, noting how many Query pages had been asked for at its first byte.
    const before = queries();
    const response = await fetch(`${stack.url}/inventory`, {
      headers: { ...stack.authHeader, 'Accept-Encoding': 'identity' },
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const parts: Uint8Array[] = [];
    let atFirstByte = -1;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (atFirstByte < 0) atFirstByte = queries() - before;
      parts.push(value);
    }
    const text = Buffer.concat(parts).toString('utf8');
    const total = queries() - before;

    // Assess: the first byte came after the first page (the second one asked for meanwhile), long before the last
    // of the list's 21 pages (2,500 entries, then 5,000 each).
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(Buffer.byteLength(text)).toBeGreaterThan(6 * 1024 * 1024);
    expect(text === expected).toBe(true);
    expect(atFirstByte).toBeGreaterThanOrEqual(1);
    expect(atFirstByte).toBeLessThanOrEqual(2);
    expect(total).toBeGreaterThanOrEqual(21);
  }, 120_000);

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
  }, 120_000);

  it('reads it with the typed client, every petId exact as a bigint', async () => {
    // Act
    const { data, error } = await createInventoryClient({ baseUrl: stack.url, apiKey: stack.key }).GET('/inventory');

    // Assess
    expect(error).toBeUndefined();
    expect(data).toHaveLength(ENTRIES);
    expect(data?.[0]?.petId).toBe(9_223_372_036_854_775_807n - BigInt(ENTRIES - 1) * 76_861_433_640_456n);
    expect(data?.at(-1)?.petId).toBe(9_223_372_036_854_775_807n);
  }, 120_000);
});
