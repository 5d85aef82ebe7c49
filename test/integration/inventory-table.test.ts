import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  InventoryItemNotFoundError,
  QuantityConflictError,
  StorageUnavailableError,
} from '../../functions/inventory/errors';
import type { ChangeOrigin, InventoryItem } from '../../functions/inventory/types';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { InventoryTable, toChangeOrigin } from '../../functions/store/inventory-table';
import { freePort } from '../../tooling/dynamodb-local';
import type { TableNames } from '../../tooling/tables';
import { freshTables, putItems, snapshotTable, testClient } from '../helpers/local-stack';

const ORIGIN: ChangeOrigin = { source: 'api', actor: 'key_test', requestId: 'req-1', at: '2026-11-23T10:00:00.000Z' };

describe('Store: InventoryTable against DynamoDB Local', () => {
  let client: DynamoDBClient;
  let tables: TableNames;

  beforeAll(async () => {
    client = testClient();
  });
  beforeEach(async () => {
    tables = await freshTables(client);
  });
  afterAll(() => client.destroy());

  it('round-trips the int64 extremes and 2^53+1 exactly', async () => {
    // Prepare
    const items: InventoryItem[] = [
      { petId: '9223372036854775807', quantity: 1, status: 'available' },
      { petId: '-9223372036854775808', quantity: 2, status: 'pending' },
      { petId: '9007199254740993', quantity: 3, status: 'sold' },
    ];
    await putItems(client, tables.inventory, items);
    const repository = new InventoryTable({ client, tableName: tables.inventory });
    // Act
    const listed = await repository.listAll();
    const updated = await repository.setQuantity('9223372036854775807', { quantity: 42 }, ORIGIN);
    // Assess
    expect(listed.map((item) => item.petId)).toEqual([
      '-9223372036854775808',
      '9007199254740993',
      '9223372036854775807',
    ]);
    expect(updated).toEqual({ petId: '9223372036854775807', quantity: 42, status: 'available' });
  });

  it('returns every entry of a table larger than one 1 MB Scan page, ordered numerically', async () => {
    // Prepare: 2,600 rows of ~1 KB each is ~2.6 MB: at least three pages for a single segment.
    const padding = 'x'.repeat(1000);
    const items = Array.from({ length: 2600 }, (_, i) => ({
      petId: String(2600 - i),
      quantity: i % 50,
      status: 'available' as const,
      padding,
    }));
    await putItems(client, tables.inventory, items);
    const repository = new InventoryTable({ client, tableName: tables.inventory, entriesPerSegment: 1000 });
    // Act: the first list reads one segment; the second is sized from it (2,600 / 1,000 -> 3 segments).
    const lists = [await repository.listAll(), await repository.listAll()];
    // Assess
    expect(repository.scanSegmentsFor(2600)).toBe(3);
    for (const listed of lists) {
      expect(listed).toHaveLength(2600);
      expect(listed[0]).toEqual({ petId: '1', quantity: 49, status: 'available' });
      expect(listed.at(-1)?.petId).toBe('2600');
      expect(new Set(listed.map((item) => item.petId)).size).toBe(2600);
    }
  });

  it('lists entries in numeric petId order whatever the storage order: negatives first, then by magnitude', async () => {
    // Prepare: ids whose text order differs from their numeric order.
    const ids = ['10', '-2', '9', '-10', '0', '100', '-9223372036854775808', '9223372036854775807', '99'];
    await putItems(
      client,
      tables.inventory,
      ids.map((petId) => ({ petId, quantity: 1, status: 'available' as const })),
    );
    // Act
    const listed = await new InventoryTable({ client, tableName: tables.inventory }).listAll();
    // Assess
    expect(listed.map((item) => item.petId)).toEqual([
      '-9223372036854775808',
      '-10',
      '-2',
      '0',
      '9',
      '10',
      '99',
      '100',
      '9223372036854775807',
    ]);
  });

  it('sizes the parallel Scan from the previous list: one segment when unknown, at most the maximum', () => {
    const repository = new InventoryTable({
      client,
      tableName: 'unused',
      maxScanSegments: 4,
      entriesPerSegment: 25_000,
    });
    expect([undefined, 0, 25_000, 25_001, 60_000, 1_000_000].map((n) => repository.scanSegmentsFor(n))).toEqual([
      1, 1, 1, 2, 3, 4,
    ]);
  });

  it('updates only the quantity and leaves status and other attributes as they were', async () => {
    await putItems(client, tables.inventory, [{ petId: '5', quantity: 1, status: 'sold', padding: 'keep me' }]);
    const repository = new InventoryTable({ client, tableName: tables.inventory });
    const updated = await repository.setQuantity('5', { quantity: 0 }, ORIGIN);
    expect(updated).toEqual({ petId: '5', quantity: 0, status: 'sold' });
    expect(await snapshotTable(client, tables.inventory)).toContain('keep me');
  });

  it('throws InventoryItemNotFoundError and creates nothing for a pet with no entry', async () => {
    await putItems(client, tables.inventory, [{ petId: '1', quantity: 1, status: 'available' }]);
    const before = await snapshotTable(client, tables.inventory);
    const repository = new InventoryTable({ client, tableName: tables.inventory });
    await expect(repository.setQuantity('2', { quantity: 5 }, ORIGIN)).rejects.toBeInstanceOf(
      InventoryItemNotFoundError,
    );
    expect(await snapshotTable(client, tables.inventory)).toBe(before);
  });

  it('writes who and why (lastChange) on the entry in the same update as the quantity', async () => {
    // Prepare
    await putItems(client, tables.inventory, [{ petId: '6', quantity: 1, status: 'available' }]);
    const repository = new InventoryTable({ client, tableName: tables.inventory });
    // Act
    await repository.setQuantity('6', { quantity: 2 }, ORIGIN);
    // Assess
    const { Item } = await client.send(
      new GetItemCommand({ TableName: tables.inventory, Key: { petId: { N: '6' } }, ConsistentRead: true }),
    );
    expect(toChangeOrigin(Item ?? {})).toEqual(ORIGIN);
  });

  it('applies a compare-and-set update when the stored quantity is the expected one', async () => {
    await putItems(client, tables.inventory, [{ petId: '7', quantity: 12, status: 'pending' }]);
    const repository = new InventoryTable({ client, tableName: tables.inventory });
    const updated = await repository.setQuantity('7', { quantity: 13, expectedQuantity: 12 }, ORIGIN);
    expect(updated).toEqual({ petId: '7', quantity: 13, status: 'pending' });
  });

  it('refuses a stale compare-and-set with the current quantity from the failed condition, changing nothing', async () => {
    // Prepare
    await putItems(client, tables.inventory, [{ petId: '7', quantity: 12, status: 'pending' }]);
    const before = await snapshotTable(client, tables.inventory);
    const repository = new InventoryTable({ client, tableName: tables.inventory });
    // Act
    const refusal = await repository.setQuantity('7', { quantity: 11, expectedQuantity: 10 }, ORIGIN).catch((e) => e);
    // Assess
    expect(refusal).toBeInstanceOf(QuantityConflictError);
    expect(refusal).toMatchObject({ petId: '7', expectedQuantity: 10, currentQuantity: 12 });
    expect(await snapshotTable(client, tables.inventory)).toBe(before);
  });

  it('tells a missing entry from a conflict: compare-and-set on a pet with no entry is not found', async () => {
    const repository = new InventoryTable({ client, tableName: tables.inventory });
    await expect(repository.setQuantity('8', { quantity: 1, expectedQuantity: 0 }, ORIGIN)).rejects.toBeInstanceOf(
      InventoryItemNotFoundError,
    );
    expect(await snapshotTable(client, tables.inventory)).toBe('');
  });

  it('turns unreachable storage into StorageUnavailableError within the retry budget', async () => {
    // Prepare: a port nobody listens on, the real SDK client with its bounded retries.
    const deadClient = createDynamoClient({
      endpoint: `http://127.0.0.1:${await freePort()}`,
      maxAttempts: 2,
      requestTimeoutMs: 500,
      connectionTimeoutMs: 300,
    });
    const repository = new InventoryTable({ client: deadClient, tableName: tables.inventory });
    const started = Date.now();
    // Act + Assess
    await expect(repository.listAll()).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(repository.setQuantity('1', { quantity: 1 }, ORIGIN)).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(Date.now() - started).toBeLessThan(10_000);
    deadClient.destroy();
  });
});
