import {
  type DynamoDBClient,
  GetItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import {
  AdjustmentConflictError,
  ConcurrentChangeError,
  InventoryItemNotFoundError,
  QuantityConflictError,
  StorageUnavailableError,
} from '../../functions/inventory/errors';
import type { ListOptions } from '../../functions/inventory/repository';
import type { ChangeOrigin, InventoryItem } from '../../functions/inventory/types';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { toChangeOrigin } from '../../functions/store/inventory-row';
import { InventoryTable, type InventoryTableOptions } from '../../functions/store/inventory-table';
import type { PaceClock } from '../../functions/store/read-pace';
import { freePort } from '../../local/dynamodb-local';
import type { TableNames } from '../../service/local-dynamodb';
import { freshTables, putItems, snapshotTable, testClient, testEndpoint } from '../helpers/local-stack';
import { startAnswerLosingEndpoint, startThrottlingEndpoint } from '../helpers/throttling-endpoint';

/** A clock that only moves when slept on: the pace's waits are then exact and cost no real time. */
function virtualClock(): PaceClock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

/** Every entry a list gives, its batches joined. */
async function listAll(repository: InventoryTable, options?: ListOptions): Promise<InventoryItem[]> {
  const items: InventoryItem[] = [];
  for await (const batch of repository.list(options)) items.push(...batch);
  return items;
}

/** Entries of about 1 KB each in the table (the index holds only what the list reads of them). */
function paddedItems(count: number) {
  const padding = 'x'.repeat(1000);
  return Array.from({ length: count }, (_, i) => ({
    petId: String(count - i),
    quantity: i % 50,
    status: 'available' as const,
    padding,
  }));
}

const ORIGIN: ChangeOrigin = { source: 'api', actor: 'key_test', requestId: 'req-1', at: '2026-11-23T10:00:00.000Z' };

describe('Store: InventoryTable against DynamoDB Local', () => {
  let client: DynamoDBClient;
  let tables: TableNames;
  /** The store over this test's fresh inventory table, with the default options. */
  let table: InventoryTable;

  beforeAll(async () => {
    client = testClient();
  });
  beforeEach(async () => {
    tables = await freshTables(client);
    table = new InventoryTable({ client, tableName: tables.inventory });
  });
  afterAll(() => client.destroy());

  /** The entry of `petId` as stored, read consistently. */
  const storedItem = async (petId: string) => {
    const { Item } = await client.send(
      new GetItemCommand({ TableName: tables.inventory, Key: { petId: { N: petId } }, ConsistentRead: true }),
    );
    return Item;
  };

  it('round-trips the int64 extremes and 2^53+1 exactly', async () => {
    // Prepare
    const items: InventoryItem[] = [
      { petId: '9223372036854775807', quantity: 1, status: 'available' },
      { petId: '-9223372036854775808', quantity: 2, status: 'pending' },
      { petId: '9007199254740993', quantity: 3, status: 'sold' },
    ];
    await putItems(client, tables.inventory, items);
    // Act
    const listed = await listAll(table);
    const updated = await table.applyChange('9223372036854775807', { quantity: 42 }, ORIGIN);
    // Assess
    expect(listed.map((item) => item.petId)).toEqual([
      '-9223372036854775808',
      '9007199254740993',
      '9223372036854775807',
    ]);
    expect(updated).toEqual({ petId: '9223372036854775807', quantity: 42, status: 'available', version: 2 });
  });

  it('lists entries in numeric petId order whatever the storage order: negatives first, then by magnitude', async () => {
    // Prepare: ids whose text order differs from their numeric order, DynamoDB Number sort keys sort numerically
    // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.KeyConditionExpressions.html).
    const ids = ['10', '-2', '9', '-10', '0', '100', '-9223372036854775808', '9223372036854775807', '99', '-18'];
    await putItems(
      client,
      tables.inventory,
      ids.map((petId) => ({ petId, quantity: 1, status: 'available' as const })),
    );
    // Act
    const listed = await listAll(table);
    // Assess
    expect(listed.map((item) => item.petId)).toEqual([
      '-9223372036854775808',
      '-18',
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

  it("books the first page at the most its 2,500 entries can cost (31 units), at the list's pace", async () => {
    // Prepare: a pace of 16 units/s on a virtual clock: a booking of 31 waits 937.5 ms (one second's worth at once).
    await putItems(client, tables.inventory, paddedItems(5));
    const clock = virtualClock();
    const repository = new InventoryTable({ client, tableName: tables.inventory, readUnitsPerSecond: 16, clock });
    // Act
    const listed = await listAll(repository);
    // Assess
    expect(listed).toHaveLength(5);
    expect(clock.slept).toEqual([937.5]);
  });

  it('gives the entries after `after` (exclusive), at most `limit`, and pages that join to the whole list', async () => {
    // Prepare
    const ids = Array.from({ length: 300 }, (_, i) => String((i - 150) * 1_000_000_007));
    await putItems(
      client,
      tables.inventory,
      ids.map((petId) => ({ petId, quantity: 1, status: 'sold' as const })),
    );
    const repository = new InventoryTable({ client, tableName: tables.inventory, pageLimit: 9 });
    // Act: pages of 40, each after the previous page's last petId.
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const page = await listAll(repository, { limit: 40, ...(after === undefined ? {} : { after }) });
      if (page.length === 0) break;
      pages.push(page.map((item) => item.petId));
      after = page.at(-1)?.petId;
    }
    // Assess
    expect(pages.slice(0, -1).every((page) => page.length === 40)).toBe(true);
    expect(pages.flat()).toEqual(ids);
    expect((await listAll(repository, { after: ids[0] as string })).map((item) => item.petId)).toEqual(ids.slice(1));
    expect(await listAll(repository, { after: '9223372036854775807' })).toEqual([]);
  });

  it('updates only the quantity and leaves status and other attributes as they were', async () => {
    await putItems(client, tables.inventory, [{ petId: '5', quantity: 1, status: 'sold', padding: 'keep me' }]);
    const updated = await table.applyChange('5', { quantity: 0 }, ORIGIN);
    expect(updated).toEqual({ petId: '5', quantity: 0, status: 'sold', version: 2 });
    expect(await snapshotTable(client, tables.inventory)).toContain('keep me');
  });

  it('throws InventoryItemNotFoundError and creates nothing for a pet with no entry', async () => {
    await putItems(client, tables.inventory, [{ petId: '1', quantity: 1, status: 'available' }]);
    const before = await snapshotTable(client, tables.inventory);
    await expect(table.applyChange('2', { quantity: 5 }, ORIGIN)).rejects.toBeInstanceOf(InventoryItemNotFoundError);
    expect(await snapshotTable(client, tables.inventory)).toBe(before);
  });

  it('writes who and why (lastChange) on the entry in the same update as the quantity', async () => {
    // Prepare
    await putItems(client, tables.inventory, [{ petId: '6', quantity: 1, status: 'available' }]);
    // Act
    await table.applyChange('6', { quantity: 2 }, ORIGIN);
    // Assess
    expect(toChangeOrigin((await storedItem('6')) ?? {})).toEqual(ORIGIN);
  });

  it('applies a compare-and-set update when the stored quantity is the expected one', async () => {
    await putItems(client, tables.inventory, [{ petId: '7', quantity: 12, status: 'pending' }]);
    const updated = await table.applyChange('7', { quantity: 13, expectedQuantity: 12 }, ORIGIN);
    expect(updated).toEqual({ petId: '7', quantity: 13, status: 'pending', version: 2 });
  });

  it('refuses a stale compare-and-set with the current quantity from the failed condition, changing nothing', async () => {
    // Prepare
    await putItems(client, tables.inventory, [{ petId: '7', quantity: 12, status: 'pending' }]);
    const before = await snapshotTable(client, tables.inventory);
    // Act
    const refusal = await table.applyChange('7', { quantity: 11, expectedQuantity: 10 }, ORIGIN).catch((e) => e);
    // Assess
    expect(refusal).toBeInstanceOf(QuantityConflictError);
    expect(refusal).toMatchObject({ petId: '7', expectedQuantity: 10, currentQuantity: 12 });
    expect(await snapshotTable(client, tables.inventory)).toBe(before);
  });

  it('tells a missing entry from a conflict: compare-and-set on a pet with no entry is not found', async () => {
    await expect(table.applyChange('8', { quantity: 1, expectedQuantity: 0 }, ORIGIN)).rejects.toBeInstanceOf(
      InventoryItemNotFoundError,
    );
    expect(await snapshotTable(client, tables.inventory)).toBe('');
  });

  describe('one change, applied once across its attempts (changeId)', () => {
    /** A repository whose client retries once, through an endpoint that loses the answer to the first UpdateItem. */
    async function losingFirstAnswer() {
      const endpoint = await startAnswerLosingEndpoint(
        testEndpoint(),
        (operation, index) => operation === 'UpdateItem' && index === 0,
      );
      const retryingClient = testClient({ endpoint: endpoint.url, maxAttempts: 2 });
      const repository = new InventoryTable({ client: retryingClient, tableName: tables.inventory });
      const updates = () => endpoint.calls.filter((call) => call.operation === 'UpdateItem');
      const close = async () => {
        retryingClient.destroy();
        await endpoint.close();
      };
      return { repository, updates, close };
    }

    it.each([
      {
        behaviour:
          'adds an adjustment once when DynamoDB applied it and the answer was lost: the SDK retry answers the entry as it left it',
        entry: { petId: '11', quantity: 10, status: 'available' as const },
        change: { adjustBy: 3 },
        quantity: 13,
      },
      {
        behaviour:
          'answers a compare-and-set whose answer was lost with the entry it wrote, not 409 for finding its own quantity',
        entry: { petId: '12', quantity: 10, status: 'pending' as const },
        change: { quantity: 4, expectedQuantity: 10 },
        quantity: 4,
      },
    ])('$behaviour', async ({ entry, change, quantity }) => {
      // Prepare
      await putItems(client, tables.inventory, [entry]);
      const { repository, updates, close } = await losingFirstAnswer();
      try {
        // Act
        const answer = await repository.applyChange(entry.petId, change, ORIGIN);
        // Assess: two attempts went out, the first answer was lost after DynamoDB Local applied it.
        expect(updates().map((call) => call.lost)).toEqual([true, false]);
        // One version more: the retry found its change landed and wrote nothing.
        expect(answer).toEqual({ ...entry, quantity, version: 2 });
        expect(Number((await storedItem(entry.petId))?.quantity?.N)).toBe(quantity);
      } finally {
        await close();
      }
    });

    it("applies nothing for a changeId that is the entry's last change, and answers the entry as stored (one name, one change)", async () => {
      // Prepare
      await putItems(client, tables.inventory, [{ petId: '13', quantity: 10, status: 'sold' }]);
      const origin = { ...ORIGIN, changeId: 'change-a' };
      await table.applyChange('13', { adjustBy: -4 }, origin);
      const before = await snapshotTable(client, tables.inventory);
      // Act: the same change again, and a set under the same name.
      const repeat = await table.applyChange('13', { adjustBy: -4 }, { ...origin, at: '2026-11-23T10:00:05.000Z' });
      const set = await table.applyChange('13', { quantity: 99 }, origin);
      // Assess
      expect(repeat).toEqual({ petId: '13', quantity: 6, status: 'sold', version: 2 });
      expect(set).toEqual({ petId: '13', quantity: 6, status: 'sold', version: 2 });
      expect(await snapshotTable(client, tables.inventory)).toBe(before);
    });

    it('applies a changeId again once another change came in between (the limit docs/api.md states)', async () => {
      await putItems(client, tables.inventory, [{ petId: '14', quantity: 10, status: 'available' }]);
      await table.applyChange('14', { adjustBy: 1 }, { ...ORIGIN, changeId: 'change-a' });
      await table.applyChange('14', { adjustBy: 1 }, { ...ORIGIN, changeId: 'change-b' });
      const again = await table.applyChange('14', { adjustBy: 1 }, { ...ORIGIN, changeId: 'change-a' });
      expect(again.quantity).toBe(13);
    });

    it('recognizes a changeId within 24 hours of its change and not after', async () => {
      // Prepare
      await putItems(client, tables.inventory, [{ petId: '15', quantity: 10, status: 'available' }]);
      const first = { ...ORIGIN, changeId: 'change-a', at: '2026-11-23T10:00:00.000Z' };
      await table.applyChange('15', { adjustBy: 1 }, first);
      // Act
      const within = await table.applyChange('15', { adjustBy: 1 }, { ...first, at: '2026-11-24T10:00:00.000Z' });
      const after = await table.applyChange('15', { adjustBy: 1 }, { ...first, at: '2026-11-24T10:00:00.001Z' });
      // Assess
      expect(within.quantity).toBe(11);
      expect(after.quantity).toBe(12);
    });

    it("names each call's change itself when the origin has no changeId: two calls are two changes", async () => {
      await putItems(client, tables.inventory, [{ petId: '16', quantity: 10, status: 'available' }]);
      await table.applyChange('16', { adjustBy: 2 }, ORIGIN);
      const second = await table.applyChange('16', { adjustBy: 2 }, ORIGIN);
      expect(second.quantity).toBe(14);
    });
  });

  describe('many changes, all or none (applyChanges)', () => {
    const stock = [
      { petId: '21', quantity: 10, status: 'available' as const },
      { petId: '22', quantity: 5, status: 'pending' as const },
      { petId: '9223372036854775807', quantity: 1, status: 'sold' as const },
    ];
    const lastChangeOf = async (petId: string) => {
      const item = await storedItem(petId);
      return item ? toChangeOrigin(item) : undefined;
    };

    it('applies every change, answers the entries in request order, each signed with its own note and delta', async () => {
      // Prepare
      await putItems(client, tables.inventory, stock);
      // Act
      const items = await table.applyChanges(
        [
          { petId: '9223372036854775807', adjustBy: 4, reason: 'received', reference: 'delivery 4411' },
          { petId: '21', quantity: 0, expectedQuantity: 10, reason: 'sold' },
          { petId: '22', quantity: 6 },
        ],
        ORIGIN,
      );
      // Assess
      expect(items).toEqual([
        { petId: '9223372036854775807', quantity: 5, status: 'sold', version: 2 },
        { petId: '21', quantity: 0, status: 'available', version: 2 },
        { petId: '22', quantity: 6, status: 'pending', version: 2 },
      ]);
      expect(await lastChangeOf('9223372036854775807')).toEqual({
        ...ORIGIN,
        adjustBy: 4,
        reason: 'received',
        reference: 'delivery 4411',
      });
      expect(await lastChangeOf('21')).toEqual({ ...ORIGIN, reason: 'sold' });
      expect(await lastChangeOf('22')).toEqual(ORIGIN);
    });

    it('writes nothing for a set to the quantity an entry holds and applies the others, each one version more', async () => {
      // Prepare
      await putItems(client, tables.inventory, stock);
      const before = await storedItem('22');
      // Act: pet 22 already holds 5, also as a compare-and-set.
      const items = await table.applyChanges(
        [
          { petId: '21', adjustBy: -1 },
          { petId: '22', quantity: 5, expectedQuantity: 5 },
          { petId: '9223372036854775807', quantity: 2 },
        ],
        ORIGIN,
      );
      const alone = await table.applyChange('22', { quantity: 5 }, ORIGIN);
      // Assess
      expect(items.map((item) => [item.quantity, item.version])).toEqual([
        [9, 2],
        [5, 1],
        [2, 2],
      ]);
      expect(alone).toEqual({ petId: '22', quantity: 5, status: 'pending', version: 1 });
      expect(await storedItem('22')).toEqual(before);
    });

    it("applies none when one cannot be applied, and throws the first failing change's error, naming it", async () => {
      await putItems(client, tables.inventory, stock);
      const before = await snapshotTable(client, tables.inventory);
      const missing = await table
        .applyChanges(
          [
            { petId: '21', adjustBy: 1 },
            { petId: '404', quantity: 1 },
            { petId: '22', adjustBy: -6 },
          ],
          ORIGIN,
        )
        .catch((error: unknown) => error);
      const conflict = await table
        .applyChanges(
          [
            { petId: '21', adjustBy: 1 },
            { petId: '22', adjustBy: -6 },
          ],
          ORIGIN,
        )
        .catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(InventoryItemNotFoundError);
      expect((missing as Error).message).toBe('changes[1] (petId 404): No inventory entry exists for petId 404.');
      expect(conflict).toBeInstanceOf(AdjustmentConflictError);
      expect((conflict as Error).message).toMatch(/^changes\[1\] \(petId 22\): The stored quantity of petId 22 is 5;/);
      expect(await snapshotTable(client, tables.inventory)).toBe(before);
    });

    it('applies a batch once when DynamoDB applied it and the answer was lost: the SDK retry answers the entries', async () => {
      // Prepare: an endpoint that loses the first transaction's answer after DynamoDB Local applied it.
      await putItems(client, tables.inventory, stock);
      const endpoint = await startAnswerLosingEndpoint(
        testEndpoint(),
        (operation, index) => operation === 'TransactWriteItems' && index === 0,
      );
      const retryingClient = testClient({ endpoint: endpoint.url, maxAttempts: 2 });
      try {
        const repository = new InventoryTable({ client: retryingClient, tableName: tables.inventory });
        // Act
        const items = await repository.applyChanges(
          [
            { petId: '21', adjustBy: 3 },
            { petId: '22', adjustBy: -1 },
          ],
          ORIGIN,
        );
        // Assess
        const sent = endpoint.calls.filter((call) => call.operation === 'TransactWriteItems');
        expect(sent.map((call) => call.lost)).toEqual([true, false]);
        expect(items.map((item) => item.quantity)).toEqual([13, 4]);
      } finally {
        retryingClient.destroy();
        await endpoint.close();
      }
    });

    it("applies nothing for a changeId that is already every entry's last change, and answers the entries", async () => {
      await putItems(client, tables.inventory, stock);
      const origin = { ...ORIGIN, changeId: 'idempotency-key:batch-a' };
      const batch = [
        { petId: '21', adjustBy: 2 },
        { petId: '22', adjustBy: 2 },
      ];
      await table.applyChanges(batch, origin);
      const before = await snapshotTable(client, tables.inventory);
      // A repeat whose first answer was not kept: another request id and moment, the same change.
      const repeat = await table.applyChanges(batch, {
        ...origin,
        requestId: 'req-2',
        at: '2026-11-23T10:00:05.000Z',
      });
      expect(repeat.map((item) => item.quantity)).toEqual([12, 7]);
      expect(await snapshotTable(client, tables.inventory)).toBe(before);
    });

    it('counts a batch as landed while one entry still has it as its last change, another change since or not', async () => {
      // Prepare: the batch lands, then pet 22 is changed by another request so that the batch's adjustment no longer fits.
      await putItems(client, tables.inventory, stock);
      const origin = { ...ORIGIN, changeId: 'idempotency-key:batch-d' };
      const batch = [
        { petId: '21', adjustBy: 1 },
        { petId: '22', adjustBy: -5 },
      ];
      await table.applyChanges(batch, origin);
      await table.applyChange('22', { quantity: 2 }, ORIGIN);
      const before = await snapshotTable(client, tables.inventory);
      // Act: a repeat after a lost answer, as a client's resend under its Idempotency-Key is.
      const repeat = await table.applyChanges(batch, { ...origin, at: '2026-11-23T10:00:05.000Z' });
      // Assess: answered as stored, nothing applied, no 409 for pet 22.
      expect(repeat.map((item) => item.quantity)).toEqual([11, 2]);
      expect(await snapshotTable(client, tables.inventory)).toBe(before);
    });

    it('applies a resent batch whose first attempt under the same changeId was refused, once what refused it is gone', async () => {
      // Prepare: the first attempt is refused (pet 23 has no entry), then the entry is made.
      await putItems(client, tables.inventory, stock);
      const origin = { ...ORIGIN, changeId: 'idempotency-key:batch-b' };
      const batch = [
        { petId: '21', adjustBy: 1 },
        { petId: '23', quantity: 7 },
      ];
      await expect(table.applyChanges(batch, origin)).rejects.toBeInstanceOf(InventoryItemNotFoundError);
      await putItems(client, tables.inventory, [{ petId: '23', quantity: 0, status: 'available' }]);
      // Act: the same change again within DynamoDB's token window, as a client's resend is (another moment).
      const items = await table.applyChanges(batch, {
        ...origin,
        requestId: 'req-2',
        at: '2026-11-23T10:00:05.000Z',
      });
      // Assess: applied, not answered as if it had landed.
      expect(items.map((item) => item.quantity)).toEqual([11, 7]);
    });

    // DynamoDB refuses a ClientRequestToken used within 10 minutes with other parameters (TransactWriteItems,
    // "IdempotentParameterMismatchException"); DynamoDB Local does not keep tokens, so that answer is stood in for.
    it('sends a resend that DynamoDB refuses under its token again without one, and applies it once', async () => {
      await putItems(client, tables.inventory, stock);
      const sent: (string | undefined)[] = [];
      const refusingTokens = {
        send: async (command: unknown) => {
          if (command instanceof TransactWriteItemsCommand) {
            sent.push(command.input.ClientRequestToken);
            if (command.input.ClientRequestToken !== undefined)
              throw Object.assign(new Error('token used with other parameters'), {
                name: 'IdempotentParameterMismatchException',
              });
          }
          return client.send(command as TransactWriteItemsCommand);
        },
      } as unknown as DynamoDBClient;
      const repository = new InventoryTable({ client: refusingTokens, tableName: tables.inventory });
      const origin = { ...ORIGIN, changeId: 'idempotency-key:batch-c' };
      const batch = [{ petId: '21', adjustBy: 5 }];
      const first = await repository.applyChanges(batch, origin);
      const again = await repository.applyChanges(batch, { ...origin, at: '2026-11-23T10:00:05.000Z' });
      expect(sent).toHaveLength(4);
      expect(sent[0]).toMatch(/^[\w-]{36}$/);
      expect(sent[1]).toBeUndefined();
      expect(first.map((item) => item.quantity)).toEqual([15]);
      expect(again.map((item) => item.quantity)).toEqual([15]);
    });

    /** A client whose TransactWriteItems DynamoDB cancels for `code` on the second change (a fault Local never makes). */
    function cancelling(code: string): DynamoDBClient {
      return {
        send: async (command: unknown) => {
          if (!(command instanceof TransactWriteItemsCommand)) throw new Error('not expected');
          throw new TransactionCanceledException({
            message: `Transaction cancelled, please refer cancellation reasons for specific reasons [None, ${code}]`,
            $metadata: {},
            CancellationReasons: [{ Code: 'None' }, { Code: code, Message: code }],
          });
        },
      } as unknown as DynamoDBClient;
    }

    const twoChanges = [
      { petId: '21', adjustBy: 1 },
      { petId: '22', adjustBy: 1 },
    ];

    it('throws a concurrent-change error naming the change when another request crossed the transaction', async () => {
      const repository = new InventoryTable({ client: cancelling('TransactionConflict'), tableName: tables.inventory });
      const error = await repository.applyChanges(twoChanges, ORIGIN).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ConcurrentChangeError);
      expect((error as Error).message).toBe(
        'changes[1] (petId 22): Another request changed the entry of petId 22 at the same moment, so nothing was changed; resend the request.',
      );
    });

    it('throws StorageUnavailableError (503) when DynamoDB cancels the transaction for throttling', async () => {
      const repository = new InventoryTable({ client: cancelling('ThrottlingError'), tableName: tables.inventory });
      await expect(repository.applyChanges(twoChanges, ORIGIN)).rejects.toBeInstanceOf(StorageUnavailableError);
    });
  });

  it('gives up with StorageUnavailableError once throttling outlasts the window without progress, changing nothing', async () => {
    // Prepare: every Query throttled, so no page ever comes back.
    await putItems(client, tables.inventory, paddedItems(10));
    const before = await snapshotTable(client, tables.inventory);
    const throttled = await throttledTable(tables.inventory, (operation) => operation === 'Query', 20_000);
    try {
      // Act + Assess: retried with growing waits (full jitter, so only their bounds are known) until the window
      // would be passed, then the list fails as storage unavailable (a 503 with Retry-After for the client).
      await expect(listAll(throttled.repository)).rejects.toBeInstanceOf(StorageUnavailableError);
      expect(throttled.clock.slept.length).toBeGreaterThanOrEqual(4);
      expect(throttled.clock.now()).toBeLessThanOrEqual(20_000);
      for (const wait of throttled.clock.slept) expect(wait).toBeLessThanOrEqual(5_000);
      expect(await snapshotTable(client, tables.inventory)).toBe(before);
    } finally {
      await throttled.close();
    }
  });

  it('fails the list at the first page throttled past the client retries when it has no throttle window', async () => {
    // Prepare: pages of 20; every page after the first throttled.
    await putItems(client, tables.inventory, paddedItems(100));
    const throttled = await throttledTable(
      tables.inventory,
      (operation, _, body) => operation === 'Query' && JSON.parse(body).ExclusiveStartKey !== undefined,
      0,
      undefined,
      { pageLimit: 20 },
    );
    try {
      // Act: the first batch is handed on (a stream has begun), then the list fails.
      const batches: number[] = [];
      const failure = await (async () => {
        for await (const batch of throttled.repository.list()) batches.push(batch.length);
      })().catch((error: unknown) => error);
      // Assess
      expect(batches).toEqual([20]);
      expect(failure).toBeInstanceOf(StorageUnavailableError);
      expect(throttled.endpoint.calls.filter((call) => call.operation === 'Query')).toHaveLength(2);
      expect(throttled.clock.slept).toEqual([]);
    } finally {
      await throttled.close();
    }
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
    // Act
    const failures = await Promise.all([
      listAll(repository).catch((error: unknown) => error),
      repository.applyChange('1', { quantity: 1 }, ORIGIN).catch((error: unknown) => error),
    ]);
    deadClient.destroy();
    // Assess: each gave up after the client's 2 attempts (what bounds its time), not later.
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(StorageUnavailableError);
      const cause = (failure as Error).cause as { $metadata?: { attempts?: number } };
      expect(cause.$metadata?.attempts).toBe(2);
    }
  });
});

/**
 * Lists of one table of 2,000 entries, seeded once: the tests only read it. Pages of 10 to 100 entries make from 20
 * to 200 Queries of it.
 */
describe('Store: InventoryTable lists 2,000 entries against DynamoDB Local', () => {
  let client: DynamoDBClient;
  let tableName: string;

  beforeAll(async () => {
    client = testClient();
    tableName = (await freshTables(client)).inventory;
    await putItems(client, tableName, paddedItems(2000));
  });
  afterAll(() => client.destroy());

  it('lists every entry once, in petId order, read page by page, each page a batch', async () => {
    // Prepare: the 2,000 entries, stored in hash order, read in pages of 20 entries.
    const repository = new InventoryTable({ client, tableName, pageLimit: 20 });
    // Act
    const batches: number[] = [];
    const listed: InventoryItem[] = [];
    for await (const batch of repository.list()) {
      batches.push(batch.length);
      listed.push(...batch);
    }
    // Assess
    expect(listed.map((item) => item.petId)).toEqual(Array.from({ length: 2000 }, (_, i) => String(i + 1)));
    expect(listed[0]).toEqual({ petId: '1', quantity: 49, status: 'available', version: 1 });
    expect(batches).toEqual(Array.from({ length: 100 }, () => 20));
  });

  /** The 2,000 entries listed from the index in pages of 10, every send recorded. */
  function smallPagesList() {
    const recorder = recordingClient(client);
    const repository = new InventoryTable({ client: recorder.client, tableName, pageLimit: 10 });
    return { recorder, repository };
  }

  it('hands on each page as a batch once it arrives, with only the next page in flight', async () => {
    // Prepare: pages of 10: 200 Queries, every one recorded.
    const { recorder, repository } = smallPagesList();
    // Act
    const sentByBatch: number[] = [];
    let listed = 0;
    for await (const batch of repository.list()) {
      sentByBatch.push(recorder.sends.length);
      listed += batch.length;
    }
    // Assess: when batch i is handed on, pages 0 to i have come back and page i + 1 is asked for (none after the last).
    expect(listed).toBe(2000);
    expect(recorder.sends.every((send) => send.command === 'QueryCommand')).toBe(true);
    expect(sentByBatch).toEqual(Array.from({ length: 200 }, (_, i) => Math.min(i + 2, 201)));
  });

  it('stops reading once its reader stops: no Query is sent after the reader has what it wanted', async () => {
    // Prepare: pages of 10: 200 Query pages for the whole list.
    const { recorder, repository } = smallPagesList();
    // Act: the first batch only.
    let firstBatch = 0;
    for await (const batch of repository.list()) {
      firstBatch = batch.length;
      break;
    }
    const sentAtStop = recorder.sends.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Assess: nothing sent after the stop; before it, the first page and the one after it.
    expect(firstBatch).toBe(10);
    expect(sentAtStop).toBe(2);
    expect(recorder.sends.length).toBe(sentAtStop);
  });

  it.each(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded'])(
    'waits out Query pages throttled (%s) past the client retries and lists every entry once',
    async (errorType) => {
      // Prepare: every other Query throttled.
      const throttled = await throttledTable(
        tableName,
        (operation, n) => operation === 'Query' && n % 2 === 0,
        60_000,
        errorType,
        { pageLimit: 100 },
      );
      try {
        // Act
        const listed = await listAll(throttled.repository);
        // Assess
        expect(listed.map((item) => item.petId)).toEqual(Array.from({ length: 2000 }, (_, i) => String(i + 1)));
        const queries = throttled.endpoint.calls.filter((call) => call.operation === 'Query');
        const refused = queries.filter((call) => call.throttled).length;
        // 20 full pages of 100 and the empty one a full last page leads to (it still has a LastEvaluatedKey).
        expect(refused).toBe(21);
        expect(queries.length).toBe(2 * refused);
        expect(throttled.clock.slept).toHaveLength(refused);
        for (const wait of throttled.clock.slept) expect(wait).toBeGreaterThanOrEqual(100);
      } finally {
        await throttled.close();
      }
    },
  );
});

/** The pace over one table of 4,000 entries, seeded once (more than one second's worth at the pace's rate). */
describe('Store: InventoryTable paces a list of 4,000 entries against DynamoDB Local', () => {
  let client: DynamoDBClient;
  let tableName: string;

  beforeAll(async () => {
    client = testClient();
    tableName = (await freshTables(client)).inventory;
    await putItems(client, tableName, paddedItems(4000));
  });
  afterAll(() => client.destroy());

  it('never lets a paced list send, the page in flight included, more than one second ahead of the rate', async () => {
    // Prepare: the real clock; every Query and the read units DynamoDB Local reports for it recorded.
    const rate = 30;
    const recorder = recordingClient(client);
    const repository = new InventoryTable({
      client: recorder.client,
      tableName,
      readUnitsPerSecond: rate,
      pageLimit: 100,
    });
    // Act
    recorder.start();
    const listed = await listAll(repository);
    // Assess: by each send, the units of the pages sent so far (that one included) are within rate x (1 s + time),
    // and the pace did hold the read back (more than one second's worth was read).
    expect(listed).toHaveLength(4000);
    const ordered = [...recorder.sends].sort((a, b) => a.at - b.at);
    let sent = 0;
    // (A timer may fire a millisecond before Date.now says its time has come: 10 ms of slack, 0.3 units at this rate.)
    for (const send of ordered) {
      expect(Number.isFinite(send.units)).toBe(true);
      sent += send.units;
      expect(sent).toBeLessThanOrEqual(rate * (1 + (send.at + 10) / 1000));
    }
    expect(sent).toBeGreaterThan(rate);
    expect(ordered.at(-1)?.at).toBeGreaterThan(((sent - (ordered.at(-1)?.units ?? 0)) / rate - 1) * 1000);
  });

  it('asks 2,500 entries of the first page, for a quick first byte, and 5,000 of each later one', async () => {
    const recorder = recordingClient(client);
    const repository = new InventoryTable({ client: recorder.client, tableName });

    expect(await listAll(repository)).toHaveLength(4000);
    // (DynamoDB Local ends these 1 KB items' pages at 1 MB, before the Limit: more pages than 4,000 entries need.)
    const [first, ...later] = recorder.sends.map((send) => send.limit);
    expect(first).toBe(2500);
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((limit) => limit === 5000)).toBe(true);
  });

  it('reads at full speed, without waiting, when no pace is set', async () => {
    const clock = virtualClock();
    const repository = new InventoryTable({ client, tableName, pageLimit: 100, clock });
    expect(await listAll(repository)).toHaveLength(4000);
    expect(clock.slept).toEqual([]);
  });
});

/**
 * A table behind a stand-in endpoint that throttles the Queries `throttle` picks, read by a client that makes one
 * attempt per call, with no rate and `throttleWindowMs` on a virtual clock.
 */
async function throttledTable(
  tableName: string,
  throttle: (operation: string, index: number, body: string) => boolean,
  throttleWindowMs: number,
  errorType?: string,
  tableOptions: Partial<InventoryTableOptions> = {},
) {
  const endpoint = await startThrottlingEndpoint(testEndpoint(), throttle, errorType);
  const throttledClient = testClient({ endpoint: endpoint.url, maxAttempts: 1 });
  const clock = virtualClock();
  const repository = new InventoryTable({
    client: throttledClient,
    tableName,
    throttleWindowMs,
    clock,
    ...tableOptions,
  });
  const close = async () => {
    throttledClient.destroy();
    await endpoint.close();
  };
  return { repository, endpoint, clock, close };
}

/** A client that records when each call was sent (from `start()`) and the read units it reports. */
function recordingClient(target: DynamoDBClient) {
  const sends: { at: number; units: number; command: string; limit?: number }[] = [];
  let started = Date.now();
  const client = new Proxy(target, {
    get(object, property, receiver) {
      if (property !== 'send') return Reflect.get(object, property, receiver);
      return async (command: Parameters<DynamoDBClient['send']>[0], options?: object) => {
        const at = Date.now() - started;
        const { Limit: limit } = command.input as { Limit?: number };
        const record = { at, units: Number.NaN, command: command.constructor.name, limit };
        sends.push(record);
        const page = (await object.send(command, options)) as { ConsumedCapacity?: { CapacityUnits?: number } };
        record.units = page.ConsumedCapacity?.CapacityUnits ?? Number.NaN;
        return page;
      };
    },
  });
  return {
    client,
    sends,
    start() {
      sends.length = 0;
      started = Date.now();
    },
  };
}
