import { type AttributeValue, type DynamoDBClient, GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { generateApiKey } from '../../functions/api-keys/key';
import { InventoryItemNotFoundError, StorageUnavailableError } from '../../functions/inventory/errors';
import { ApiKeyTable, DynamoApiKeyRepository } from '../../functions/store/dynamo-api-key-repository';
import { InventoryTable } from '../../functions/store/dynamo-inventory-repository';
import { createLeanDynamoClient, type LeanDynamoClient } from '../../functions/store/lean-dynamodb';
import { isStorageUnavailable } from '../../functions/store/storage-errors';
import { freePort } from '../../infra/local/dynamodb-local';
import type { TableNames } from '../../infra/local/tables';
import { freshTables, putItems, snapshotTable, testClient, testEndpoint } from '../helpers/local-stack';
import { rejection } from '../helpers/rejection';

type Row = Record<string, AttributeValue>;

/** Every page of one Scan segment, read by `scan`; returns the rows and how many pages it took. */
async function scanAll(
  scan: (input: object) => Promise<{ Items?: Row[]; LastEvaluatedKey?: Row }>,
  input: Record<string, unknown>,
): Promise<{ rows: Row[]; pages: number }> {
  const rows: Row[] = [];
  let pages = 0;
  let startKey: Row | undefined;
  do {
    const page = await scan({ ...input, ExclusiveStartKey: startKey });
    pages++;
    rows.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { rows, pages };
}

const byPetId = (a: Row, b: Row) => (String(a.petId?.N) < String(b.petId?.N) ? -1 : 1);

describe('Lean DynamoDB against DynamoDB Local, compared with the AWS SDK', () => {
  let sdk: DynamoDBClient;
  let lean: LeanDynamoClient;
  let tables: TableNames;

  beforeAll(async () => {
    sdk = testClient();
    // Configured as a function is: endpoint, region and credentials from the environment alone.
    lean = createLeanDynamoClient({
      env: {
        AWS_ENDPOINT_URL_DYNAMODB: testEndpoint(),
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_SESSION_TOKEN: 'sessiontoken',
      },
    });
  });
  beforeEach(async () => {
    tables = await freshTables(sdk);
  });
  afterAll(() => {
    lean.destroy();
    sdk.destroy();
  });

  it('scans a 2.6 MB table page by page (ExclusiveStartKey), in 1 and 4 segments, with ConsistentRead and a projection, as the SDK does', async () => {
    // Prepare: 2,600 rows of ~1 KB, plus the int64 extremes and 2^53+1.
    const padding = 'x'.repeat(1000);
    const items = [
      ...Array.from({ length: 2600 }, (_, i) => ({
        petId: String(i + 1),
        quantity: i % 50,
        status: 'available' as const,
        padding,
      })),
      { petId: '9223372036854775807', quantity: 2147483647, status: 'pending' as const, padding },
      { petId: '-9223372036854775808', quantity: 0, status: 'sold' as const, padding },
      { petId: '9007199254740993', quantity: 7, status: 'available' as const, padding },
    ];
    await putItems(sdk, tables.inventory, items);
    for (const totalSegments of [1, 4]) {
      for (const projected of [true, false]) {
        const leanRows: Row[] = [];
        const sdkRows: Row[] = [];
        let leanPages = 0;
        let sdkPages = 0;
        for (let segment = 0; segment < totalSegments; segment++) {
          const input = {
            TableName: tables.inventory,
            ConsistentRead: true,
            Segment: segment,
            TotalSegments: totalSegments,
            ...(projected
              ? { ProjectionExpression: 'petId, quantity, #status', ExpressionAttributeNames: { '#status': 'status' } }
              : {}),
          };
          // Act
          const fromLean = await scanAll((i) => lean.scan(i as never), input);
          const fromSdk = await scanAll((i) => sdk.send(new ScanCommand(i as never)), input);
          leanRows.push(...fromLean.rows);
          sdkRows.push(...fromSdk.rows);
          leanPages += fromLean.pages;
          sdkPages += fromSdk.pages;
        }
        // Assess: the same rows, over the same pages.
        expect(leanRows).toHaveLength(items.length);
        expect(leanRows.sort(byPetId)).toEqual(sdkRows.sort(byPetId));
        expect(leanPages).toBe(sdkPages);
        if (!projected && totalSegments === 1) expect(leanPages).toBeGreaterThanOrEqual(3);
        const max = leanRows.find((row) => row.petId?.N === '9223372036854775807');
        expect(max).toEqual(
          projected
            ? { petId: { N: '9223372036854775807' }, quantity: { N: '2147483647' }, status: { S: 'pending' } }
            : {
                petId: { N: '9223372036854775807' },
                quantity: { N: '2147483647' },
                status: { S: 'pending' },
                notes: { S: padding },
              },
        );
      }
    }
    // And through the adapter the list handler uses.
    const listed = await new InventoryTable({ client: lean, tableName: tables.inventory }).listAll();
    expect(listed).toHaveLength(items.length);
    expect(listed[0]).toEqual({ petId: '-9223372036854775808', quantity: 0, status: 'sold' });
    expect(listed.at(-1)).toEqual({ petId: '9223372036854775807', quantity: 2147483647, status: 'pending' });
  });

  it('UpdateItem with attribute_exists returns ALL_NEW, exact for int64 ids, and leaves other attributes alone', async () => {
    await putItems(sdk, tables.inventory, [
      { petId: '9223372036854775807', quantity: 1, status: 'pending', padding: 'keep me' },
      { petId: '-9223372036854775808', quantity: 1, status: 'sold' },
    ]);
    for (const petId of ['9223372036854775807', '-9223372036854775808']) {
      const output = await lean.updateItem({
        TableName: tables.inventory,
        Key: { petId: { N: petId } },
        UpdateExpression: 'SET quantity = :quantity',
        ConditionExpression: 'attribute_exists(petId)',
        ExpressionAttributeValues: { ':quantity': { N: '42' } },
        ReturnValues: 'ALL_NEW',
      });
      const stored = await sdk.send(
        new GetItemCommand({ TableName: tables.inventory, Key: { petId: { N: petId } }, ConsistentRead: true }),
      );
      expect(output.Attributes).toEqual(stored.Item);
      expect(output.Attributes?.petId).toEqual({ N: petId });
      expect(output.Attributes?.quantity).toEqual({ N: '42' });
      expect(output.$metadata.httpStatusCode).toBe(200);
    }
    expect(await snapshotTable(sdk, tables.inventory)).toContain('keep me');
    const updated = await new InventoryTable({ client: lean, tableName: tables.inventory }).setQuantity(
      '9223372036854775807',
      5,
    );
    expect(updated).toEqual({ petId: '9223372036854775807', quantity: 5, status: 'pending' });
  });

  it('maps a failed condition to ConditionalCheckFailedException (400, not "unavailable"); the adapter to InventoryItemNotFoundError; nothing is created', async () => {
    await putItems(sdk, tables.inventory, [{ petId: '1', quantity: 1, status: 'available' }]);
    const before = await snapshotTable(sdk, tables.inventory);
    const error = await rejection(
      lean.updateItem({
        TableName: tables.inventory,
        Key: { petId: { N: '2' } },
        UpdateExpression: 'SET quantity = :quantity',
        ConditionExpression: 'attribute_exists(petId)',
        ExpressionAttributeValues: { ':quantity': { N: '5' } },
        ReturnValues: 'ALL_NEW',
      }),
    );
    expect(error.name).toBe('ConditionalCheckFailedException');
    expect(error.$metadata).toMatchObject({ httpStatusCode: 400, attempts: 1 });
    expect(isStorageUnavailable(error)).toBe(false);
    await expect(
      new InventoryTable({ client: lean, tableName: tables.inventory }).setQuantity('2', 5),
    ).rejects.toBeInstanceOf(InventoryItemNotFoundError);
    expect(await snapshotTable(sdk, tables.inventory)).toBe(before);
  });

  it('GetItem with ConsistentRead: the item on a hit, no Item on a miss', async () => {
    const { record } = generateApiKey('lean');
    await new DynamoApiKeyRepository({ client: sdk, tableName: tables.apiKeys }).create(record);
    const hit = await lean.getItem({
      TableName: tables.apiKeys,
      Key: { keyHash: { S: record.keyHash } },
      ConsistentRead: true,
    });
    const miss = await lean.getItem({
      TableName: tables.apiKeys,
      Key: { keyHash: { S: '0'.repeat(64) } },
      ConsistentRead: true,
    });
    expect(hit.Item?.keyId).toEqual({ S: record.keyId });
    expect(miss.Item).toBeUndefined();
    expect(miss.$metadata.httpStatusCode).toBe(200);
  });

  it('serves every ApiKeyRepository operation over the lean client as over the SDK (create, find, list, revoke)', async () => {
    const keys = new ApiKeyTable({ client: lean, tableName: tables.apiKeys });
    const viaSdk = new DynamoApiKeyRepository({ client: sdk, tableName: tables.apiKeys });
    const first = generateApiKey('first').record;
    const second = generateApiKey('second ✓').record;
    await keys.create(first);
    await viaSdk.create(second);
    await expect(keys.create(first)).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(await keys.findByHash(second.keyHash)).toEqual(second);
    expect(await keys.list()).toEqual(await viaSdk.list());
    const revoked = await keys.revoke(first.keyId, new Date('2026-11-22T00:00:00Z'));
    expect(revoked?.revokedAt).toBe('2026-11-22T00:00:00.000Z');
    expect(await viaSdk.findByHash(first.keyHash)).toEqual(revoked);
  });

  it('names a missing table ResourceNotFoundException, which stays a defect (not "unavailable") through the adapters', async () => {
    const error = await rejection(lean.scan({ TableName: 'no-such-table' }));
    expect(error.name).toBe('ResourceNotFoundException');
    expect(isStorageUnavailable(error)).toBe(false);
    await expect(new InventoryTable({ client: lean, tableName: 'no-such-table' }).listAll()).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    await expect(new ApiKeyTable({ client: lean, tableName: 'no-such-table' }).findByHash('00')).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
  });

  it('turns unreachable storage into StorageUnavailableError within the retry budget', async () => {
    const dead = createLeanDynamoClient({
      endpoint: `http://127.0.0.1:${await freePort()}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 2,
      requestTimeoutMs: 500,
      connectionTimeoutMs: 300,
    });
    const started = Date.now();
    await expect(new InventoryTable({ client: dead, tableName: tables.inventory }).listAll()).rejects.toBeInstanceOf(
      StorageUnavailableError,
    );
    await expect(
      new InventoryTable({ client: dead, tableName: tables.inventory }).setQuantity('1', 1),
    ).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(new ApiKeyTable({ client: dead, tableName: tables.apiKeys }).findByHash('00')).rejects.toBeInstanceOf(
      StorageUnavailableError,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    dead.destroy();
  });
});
