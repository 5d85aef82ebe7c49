import {
  CreateTableCommand,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { ChangeEvent } from '../../functions/inventory/change-event';
import type { StreamChange } from '../../functions/inventory/history';
import { HistoryTable, historySortKey, SETTLE_MS, settledMark } from '../../functions/store/history-table';
import { ensureTables } from '../../local/tables';
import type { TableNames } from '../../service/local-dynamodb';
import { aHistoryEntry } from '../fixtures/builders';
import { freshTables, testClient } from '../helpers/local-stack';

describe('Store: HistoryTable against DynamoDB Local (tables made by ensureTables with the shared key schema)', () => {
  let client: DynamoDBClient;
  let tables: TableNames;
  /** The history's clock: a change takes its place in the feed at this time (the builder's `at` unless a test moves it). */
  let now: number;

  beforeAll(async () => {
    client = testClient();
  });
  beforeEach(async () => {
    now = Date.parse(aHistoryEntry().at);
    tables = await freshTables(client);
  });
  afterAll(() => client.destroy());

  it("lists one pet's changes in stream order, numerically, whatever the length of the sequence numbers", async () => {
    // Prepare: written out of order; '900' < '1000' as numbers, not as text.
    const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
    await history.record([
      { entry: aHistoryEntry({ quantity: 3, previousQuantity: null, previousStatus: null }), sequenceNumber: '900' },
    ]);
    await history.record([
      { entry: aHistoryEntry({ previousQuantity: 4, quantity: 5 }), sequenceNumber: '100000000000000000001' },
    ]);
    await history.record([{ entry: aHistoryEntry({ previousQuantity: 3, quantity: 4 }), sequenceNumber: '1000' }]);
    await history.record([{ entry: aHistoryEntry({ petId: '2', quantity: 99 }), sequenceNumber: '950' }]);
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
    const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
    await history.record([{ entry: aHistoryEntry({ quantity: 1 }), sequenceNumber: '10' }]);
    await history.record([
      { entry: aHistoryEntry({ quantity: 2, reason: 'received', reference: 'delivery 4411' }), sequenceNumber: '20' },
    ]);
    await history.record([{ entry: aHistoryEntry({ quantity: 3, reason: 'sold' }), sequenceNumber: '30' }]);
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

  it('lists only the changes at or after --since, each at the time it took its place in the feed', async () => {
    const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
    for (const [at, quantity] of [
      ['2026-10-31T23:59:59.999Z', 1],
      ['2026-11-01T00:00:00.000Z', 2],
      ['2026-11-02T08:00:00.000Z', 3],
    ] as const) {
      now = Date.parse(at);
      await history.record([{ entry: aHistoryEntry({ quantity }), sequenceNumber: String(quantity) }]);
    }
    const listed = await history.listFor('9223372036854775807', { since: '2026-11-01T00:00:00.000Z' });
    expect(listed.map((entry) => [entry.quantity, entry.at])).toEqual([
      [2, '2026-11-01T00:00:00.000Z'],
      [3, '2026-11-02T08:00:00.000Z'],
    ]);
  });

  it('sets the TTL attribute expiresAt to the change time plus the retention, in epoch seconds', async () => {
    // Prepare
    const history = new HistoryTable({ client, tableName: tables.history, clock: () => now, retentionDays: 730 });
    // Act
    await history.record([{ entry: aHistoryEntry({ petId: '5' }), sequenceNumber: '77' }]);
    // Assess
    const { Item } = await client.send(
      new GetItemCommand({
        TableName: tables.history,
        Key: { petId: { N: '5' }, sequence: { S: historySortKey('77') } },
      }),
    );
    expect(Item?.expiresAt).toEqual({ N: String(Date.parse('2026-11-23T10:00:00.000Z') / 1000 + 730 * 86_400) });
  });

  describe('the feed', () => {
    /** `count` changes of pet `petId`, each one version more, from stream sequence number `first` on. */
    const changesOf = (petId: string, count: number, first = 1): StreamChange[] =>
      Array.from({ length: count }, (_, i) => ({
        entry: aHistoryEntry({ petId, previousQuantity: i, quantity: i + 1 }),
        sequenceNumber: String(first + i),
        version: i + 1,
      }));
    const wholeFeed = async (history: HistoryTable) => history.feedAfter(0, 1000);

    it('numbers the changes 1, 2, 3… in the order given, 99 to a transaction, times never going back', async () => {
      // Prepare: the clock goes back a second after the first batch; 150 changes are two transactions.
      const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
      // Act
      await history.record(changesOf('7', 1));
      now -= 1000;
      await history.record(changesOf('8', 150, 100));
      // Assess
      const events = await wholeFeed(history);
      expect(events.map((event) => event.id)).toEqual(Array.from({ length: 151 }, (_, i) => String(i + 1)));
      expect(events.slice(1).map((event) => event.version)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
      expect(new Set(events.map((event) => event.at))).toEqual(new Set([aHistoryEntry().at]));
      expect(await history.feedPosition()).toMatchObject({ sequence: 151, at: aHistoryEntry().at });
    });

    it('names for a list the newest position at least 5 s old, never one a lagging list index may not show', async () => {
      // Prepare: changes 1 to 4 at t, t+1 s, t+6 s and t+7 s.
      const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
      const t = now;
      for (const [index, offset] of [0, 1000, 6000, 7000].entries()) {
        now = t + offset;
        await history.record(changesOf('7', 1, index + 1).map((change) => ({ ...change, version: index + 1 })));
      }
      // Act
      const position = await history.feedPosition();
      const at = (ms: number) => settledMark(position, t + ms).sequence;
      // Assess: each mark once it is SETTLE_MS old; before that, the one before it.
      expect(SETTLE_MS).toBe(5000);
      expect([at(7500), at(11_000), at(12_000)]).toEqual([2, 3, 4]);
    });

    it('keeps the place of a record delivered again, and gives the next number to the new one beside it', async () => {
      // Prepare
      const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
      const [first, second] = changesOf('7', 2);
      await history.record([first as StreamChange]);
      // Act: Lambda delivers the first record again, with the second.
      await history.record([first as StreamChange, second as StreamChange]);
      await history.record([first as StreamChange, second as StreamChange]);
      // Assess
      expect((await wholeFeed(history)).map((event) => [event.id, event.version])).toEqual([
        ['1', 1],
        ['2', 2],
      ]);
      expect(await history.listFor('7')).toHaveLength(2);
    });

    it('gives every change of shards racing for the counter one number, each shard its records in stream order', async () => {
      // Prepare: four functions, each with its shard's batches of one pet.
      const shards = ['1', '2', '3', '4'].map((petId) => ({
        history: new HistoryTable({ client, tableName: tables.history }),
        changes: changesOf(petId, 60, 1000 * Number(petId)),
      }));
      // Act: batches of 10, the shards at once.
      await Promise.all(
        shards.map(async ({ history, changes }) => {
          for (let i = 0; i < changes.length; i += 10) await history.record(changes.slice(i, i + 10));
        }),
      );
      // Assess
      const events = await wholeFeed(shards[0]?.history as HistoryTable);
      expect(events.map((event) => event.id)).toEqual(Array.from({ length: 240 }, (_, i) => String(i + 1)));
      for (const petId of ['1', '2', '3', '4'])
        expect(events.filter((event) => event.petId === petId).map((event) => event.version)).toEqual(
          Array.from({ length: 60 }, (_, i) => i + 1),
        );
      for (let i = 1; i < events.length; i++)
        expect((events[i] as ChangeEvent).at >= (events[i - 1] as ChangeEvent).at).toBe(true);
    }, 30_000);

    it("keeps a change without a version in the pet's history, off the feed", async () => {
      const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
      await history.record([{ entry: aHistoryEntry({ petId: '9' }), sequenceNumber: '5' }, ...changesOf('7', 1, 6)]);
      expect((await wholeFeed(history)).map((event) => [event.id, event.petId])).toEqual([['1', '7']]);
      expect(await history.listFor('9')).toHaveLength(1);
    });

    it('serves the run of numbers after the cursor and stops at the first gap, which a later read fills', async () => {
      // Prepare: numbers 1, 2 and 4 visible; 3 not yet (a transaction's row the index has not shown).
      const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
      await history.record(changesOf('7', 4));
      const third = await client.send(
        new GetItemCommand({
          TableName: tables.history,
          Key: { petId: { N: '7' }, sequence: { S: historySortKey('3') } },
        }),
      );
      await client.send(
        new DeleteItemCommand({
          TableName: tables.history,
          Key: { petId: { N: '7' }, sequence: { S: historySortKey('3') } },
        }),
      );
      // Act
      const before = await history.feedAfter(0, 10);
      await client.send(new PutItemCommand({ TableName: tables.history, Item: third.Item ?? {} }));
      const after = await history.feedAfter(2, 10);
      // Assess
      expect(before.map((event) => event.id)).toEqual(['1', '2']);
      expect(after.map((event) => event.id)).toEqual(['3', '4']);
      expect(await history.feedAfter(1, 2)).toEqual(before.slice(1).concat(after.slice(0, 1)));
    });

    it('serves from the start only once number 1 shows, or the first row is settled (older ones expired)', async () => {
      // Prepare: numbers 1 and 2 written, 1 not showing yet.
      const history = new HistoryTable({ client, tableName: tables.history, clock: () => now });
      await history.record(changesOf('7', 2));
      const key = { petId: { N: '7' }, sequence: { S: historySortKey('1') } };
      await client.send(new DeleteItemCommand({ TableName: tables.history, Key: key }));
      // Act
      const fresh = await history.feedAfter(0, 10);
      now += SETTLE_MS;
      const settled = await history.feedAfter(0, 10);
      // Assess
      expect(fresh).toEqual([]);
      expect(settled.map((event) => event.id)).toEqual(['2']);
    });
  });

  it('gives a history table kept from an earlier npm start the feed index, and its rows to the feed from then on', async () => {
    // Prepare: a history table as it was made before the feed (no index).
    const names = { ...tables, history: `${tables.history}-kept` };
    await client.send(
      new CreateTableCommand({
        TableName: names.history,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'petId', AttributeType: 'N' },
          { AttributeName: 'sequence', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'petId', KeyType: 'HASH' },
          { AttributeName: 'sequence', KeyType: 'RANGE' },
        ],
      }),
    );
    // Act
    await ensureTables(client, names);
    const history = new HistoryTable({ client, tableName: names.history, clock: () => now });
    await history.record([{ entry: aHistoryEntry(), sequenceNumber: '1', version: 1 }]);
    // Assess
    expect((await history.feedAfter(0, 10)).map((event) => event.id)).toEqual(['1']);
  });

  it('refuses a sort key that is not a stream sequence number', () => {
    expect(() => historySortKey('12a')).toThrow(/Not a stream sequence number/);
    expect(historySortKey('111')).toBe(`${'0'.repeat(37)}111`);
  });
});
