import { type AttributeValue, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import { generateApiKey, hashApiKey } from '../../functions/api-keys/key';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { HistoryTable, historySortKey } from '../../functions/store/history-table';
import { InventoryTable } from '../../functions/store/inventory-table';
import { MalformedRowError } from '../../functions/store/storage-errors';
import type { TableNames } from '../../service/local-dynamodb';
import { freshTables, testClient } from '../helpers/local-stack';

/**
 * Rows written by something other than the adapters (a console edit, an old import) that break the model: every
 * adapter refuses them with the same error, naming the attribute, and never fills in a default.
 */
describe('Store: every adapter refuses a row that breaks its model with MalformedRowError (DynamoDB Local)', () => {
  let client: DynamoDBClient;
  let tables: TableNames;

  beforeAll(async () => {
    client = testClient();
    tables = await freshTables(client);
  });
  afterAll(() => client.destroy());

  /** Writes `row` as it is, past every adapter. */
  const putRow = (tableName: string, row: Record<string, AttributeValue>) =>
    client.send(new PutItemCommand({ TableName: tableName, Item: row }));

  it('ApiKeyTable refuses a key row with no name, on lookup and on list, instead of a record with a blank name', async () => {
    // Prepare
    const keyHash = hashApiKey('psk_malformed-row');
    await putRow(tables.apiKeys, {
      keyHash: { S: keyHash },
      keyId: { S: 'key_nameless' },
      createdAt: { S: '2026-11-23T10:00:00.000Z' },
    });
    const keys = new ApiKeyAdminTable({ client, tableName: tables.apiKeys });
    // Act: both outcomes are settled together, so neither rejection is left without a handler while the other is
    // asserted (an unhandled rejection fails the test whichever call settles first).
    const [lookup, list] = await Promise.allSettled([keys.findByHash(keyHash), keys.list()]);
    // Assess
    expect(lookup.status).toBe('rejected');
    expect(list.status).toBe('rejected');
    const lookupError = (lookup as PromiseRejectedResult).reason;
    expect(lookupError).toBeInstanceOf(MalformedRowError);
    expect(lookupError).toMatchObject({ model: 'ApiKeyRecord', row: 'key_nameless', attribute: 'name' });
    expect((list as PromiseRejectedResult).reason).toMatchObject({ name: 'MalformedRowError', attribute: 'name' });
  });

  it("revokes a key beside another key's malformed row: a leaked key's revocation never waits for a repair", async () => {
    // Prepare: a malformed row of its own (no name) and a good key beside it.
    await putRow(tables.apiKeys, {
      keyHash: { S: hashApiKey('psk_malformed-neighbour') },
      keyId: { S: 'key_neighbour' },
      createdAt: { S: '2026-11-23T10:00:00.000Z' },
    });
    const keys = new ApiKeyAdminTable({ client, tableName: tables.apiKeys });
    await expect(keys.list()).rejects.toMatchObject({ name: 'MalformedRowError' });
    const { record } = generateApiKey('leaked');
    await keys.create(record);
    // Act
    const revoked = await keys.revoke(record.keyId, new Date('2026-11-26T04:00:00.000Z'));
    // Assess
    expect(revoked).toMatchObject({ keyId: record.keyId, revokedAt: '2026-11-26T04:00:00.000Z' });
    expect((await keys.findByHash(record.keyHash))?.revokedAt).toBe('2026-11-26T04:00:00.000Z');
    await expect(keys.revoke('key_nosuchkey')).resolves.toBeUndefined();
  });

  it('ApiKeyTable refuses a key row whose createdAt is a number rather than a timestamp string', async () => {
    const keyHash = hashApiKey('psk_numeric-created-at');
    await putRow(tables.apiKeys, {
      keyHash: { S: keyHash },
      keyId: { S: 'key_numeric' },
      name: { S: 'n' },
      createdAt: { N: '1' },
    });
    await expect(new ApiKeyTable({ client, tableName: tables.apiKeys }).findByHash(keyHash)).rejects.toMatchObject({
      name: 'MalformedRowError',
      attribute: 'createdAt',
    });
  });

  it('InventoryTable refuses the row an update returns when it has no status', async () => {
    await putRow(tables.inventory, { petId: { N: '77' }, quantity: { N: '1' } });
    const inventory = new InventoryTable({ client, tableName: tables.inventory });
    const update = inventory.applyChange(
      '77',
      { quantity: 2 },
      { source: 'api', actor: 'key_test', at: '2026-11-23T10:00:00.000Z' },
    );
    await expect(update).rejects.toThrow(MalformedRowError);
    await expect(update).rejects.toMatchObject({ model: 'InventoryItem', row: '77', attribute: 'status' });
  });

  it.each([
    ['no actor', {}, 'actor'],
    ['a reason the API does not know', { actor: { S: 'key_1' }, reason: { S: 'stolen' } }, 'reason'],
  ])('HistoryTable refuses a history row with %s', async (_, attributes, attribute) => {
    await putRow(tables.history, {
      petId: { N: '78' },
      sequence: { S: historySortKey('5') },
      at: { S: '2026-11-23T10:00:00.000Z' },
      previousQuantity: { NULL: true },
      quantity: { N: '3' },
      previousStatus: { NULL: true },
      status: { S: 'available' },
      source: { S: 'api' },
      ...attributes,
    });
    const listed = new HistoryTable({ client, tableName: tables.history }).listFor('78');
    await expect(listed).rejects.toThrow(MalformedRowError);
    await expect(listed).rejects.toMatchObject({ model: 'HistoryEntry', attribute });
  });
});
