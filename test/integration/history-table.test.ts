import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { HistoryTable, historySortKey } from '../../functions/store/history-table';
import type { TableNames } from '../../service/local-dynamodb';
import { aHistoryEntry } from '../fixtures/builders';
import { freshTables, testClient } from '../helpers/local-stack';

describe('Store: HistoryTable against DynamoDB Local (tables made by ensureTables with the shared key schema)', () => {
  let client: DynamoDBClient;
  let tables: TableNames;

  beforeAll(async () => {
    client = testClient();
  });
  beforeEach(async () => {
    tables = await freshTables(client);
  });
  afterAll(() => client.destroy());

  it("lists one pet's changes in stream order, numerically, whatever the length of the sequence numbers", async () => {
    // Prepare: written out of order; '900' < '1000' as numbers, not as text.
    const history = new HistoryTable({ client, tableName: tables.history });
    await history.record(aHistoryEntry({ quantity: 3, previousQuantity: null, previousStatus: null }), '900');
    await history.record(aHistoryEntry({ previousQuantity: 4, quantity: 5 }), '100000000000000000001');
    await history.record(aHistoryEntry({ previousQuantity: 3, quantity: 4 }), '1000');
    await history.record(aHistoryEntry({ petId: '2', quantity: 99 }), '950');
    // Act
    const listed = await history.listFor('9223372036854775807');
    // Assess
    expect(listed.map((entry) => [entry.previousQuantity, entry.quantity])).toEqual([
      [null, 3],
      [3, 4],
      [4, 5],
    ]);
    expect(listed[0]).toEqual(aHistoryEntry({ quantity: 3, previousQuantity: null, previousStatus: null }));
  });

  it('keeps reason and reference, and reads newest first from past a position, as many as a page asks', async () => {
    // Prepare
    const history = new HistoryTable({ client, tableName: tables.history });
    await history.record(aHistoryEntry({ quantity: 1 }), '10');
    await history.record(aHistoryEntry({ quantity: 2, reason: 'received', reference: 'delivery 4411' }), '20');
    await history.record(aHistoryEntry({ quantity: 3, reason: 'sold' }), '30');
    const read = async (query: Parameters<HistoryTable['changes']>[1]) => {
      const rows = [];
      for await (const row of history.changes('9223372036854775807', query)) rows.push(row);
      return rows;
    };
    // Act
    const newest = await read({ newestFirst: true });
    const older = await read({ newestFirst: true, after: newest[0]?.position });
    // Assess
    expect(newest.map((row) => row.entry.quantity)).toEqual([3, 2, 1]);
    expect(newest[1]?.entry).toEqual(aHistoryEntry({ quantity: 2, reason: 'received', reference: 'delivery 4411' }));
    expect(newest[0]?.entry).not.toHaveProperty('reference');
    expect(newest.map((row) => row.position)).toEqual(['30', '20', '10'].map(historySortKey));
    expect(older.map((row) => row.entry.quantity)).toEqual([2, 1]);
  });

  it('keeps one row for a record delivered twice (the same sequence number)', async () => {
    const history = new HistoryTable({ client, tableName: tables.history });
    await history.record(aHistoryEntry(), '4242');
    await history.record(aHistoryEntry(), '4242');
    expect(await history.listFor('9223372036854775807')).toEqual([aHistoryEntry()]);
  });

  it('lists only the changes at or after --since', async () => {
    const history = new HistoryTable({ client, tableName: tables.history });
    await history.record(aHistoryEntry({ at: '2026-10-31T23:59:59.999Z', quantity: 1 }), '1');
    await history.record(aHistoryEntry({ at: '2026-11-01T00:00:00.000Z', quantity: 2 }), '2');
    await history.record(aHistoryEntry({ at: '2026-11-02T08:00:00.000Z', quantity: 3 }), '3');
    const listed = await history.listFor('9223372036854775807', { since: '2026-11-01T00:00:00.000Z' });
    expect(listed.map((entry) => entry.quantity)).toEqual([2, 3]);
  });

  it('sets the TTL attribute expiresAt to the change time plus the retention, in epoch seconds', async () => {
    // Prepare
    const history = new HistoryTable({ client, tableName: tables.history, retentionDays: 730 });
    // Act
    await history.record(aHistoryEntry({ petId: '5' }), '77');
    // Assess
    const { Item } = await client.send(
      new GetItemCommand({
        TableName: tables.history,
        Key: { petId: { N: '5' }, sequence: { S: historySortKey('77') } },
      }),
    );
    expect(Item?.expiresAt).toEqual({ N: String(Date.parse('2026-11-23T10:00:00.000Z') / 1000 + 730 * 86_400) });
  });

  it('refuses a sort key that is not a stream sequence number', () => {
    expect(() => historySortKey('12a')).toThrow(/Not a stream sequence number/);
    expect(historySortKey('111')).toBe(`${'0'.repeat(37)}111`);
  });
});
