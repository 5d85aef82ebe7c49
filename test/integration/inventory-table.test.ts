import { type DynamoDBClient, GetItemCommand, type ScanCommand, type ScanCommandInput } from '@aws-sdk/client-dynamodb';
import {
  InventoryItemNotFoundError,
  QuantityConflictError,
  StorageUnavailableError,
} from '../../functions/inventory/errors';
import type { ChangeOrigin, InventoryItem } from '../../functions/inventory/types';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { InventoryTable, toChangeOrigin } from '../../functions/store/inventory-table';
import { PAGE_UNITS, type PaceClock, ReadPace } from '../../functions/store/read-pace';
import { freePort } from '../../local/dynamodb-local';
import { scanReadUnitsPerPage } from '../../local/tables';
import type { TableNames } from '../../service/local-dynamodb';
import { freshTables, putItems, snapshotTable, testClient, testEndpoint } from '../helpers/local-stack';
import { startThrottlingEndpoint } from '../helpers/throttling-endpoint';

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

/** Entries of about 1 KB each, so a few thousand fill several 1 MB Scan pages. */
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
    const items = paddedItems(2600);
    await putItems(client, tables.inventory, items);
    const scans: ScanCommandInput[] = [];
    const recordingClient = new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return (command: ScanCommand, options?: object) => {
          scans.push(command.input);
          return target.send(command, options);
        };
      },
    });
    const repository = new InventoryTable({
      client: recordingClient,
      tableName: tables.inventory,
      entriesPerSegment: 1000,
    });
    // Act: the first list reads one segment; the second is sized from it (2,600 / 1,000 -> 3 segments).
    const first = await repository.listAll();
    const scansOfFirst = scans.splice(0);
    const second = await repository.listAll();
    // Assess: what each list sent, and what it answered.
    expect(scansOfFirst.length).toBeGreaterThanOrEqual(3);
    expect(scansOfFirst.every((scan) => scan.TotalSegments === undefined)).toBe(true);
    expect(new Set(scans.map((scan) => `${scan.Segment}/${scan.TotalSegments}`))).toEqual(
      new Set(['0/3', '1/3', '2/3']),
    );
    for (const listed of [first, second]) {
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

  it("paces the list's Scan to readUnitsPerSecond from the capacity DynamoDB reports, booking each page before it is sent", async () => {
    // Prepare: ~3 MB, three or four Scan pages of ~257 read units each (a strongly consistent unit is 4 KB).
    await putItems(client, tables.inventory, paddedItems(3000));
    const pages = await scanReadUnitsPerPage(client, tables.inventory);
    const clock = virtualClock();
    const rate = 100;
    const repository = new InventoryTable({
      client,
      tableName: tables.inventory,
      pace: () => new ReadPace(rate, 0, clock),
    });
    // Act
    const listed = await repository.listAll();
    // Assess: before each page the pace waits until the units so far and the page's booking (a full page) fit the
    // rate with one second's worth at once: at 100 units/s even the first page waits, and the last is sent at
    // ((all but the last page's units) + one page) / rate - 1 seconds.
    expect(listed).toHaveLength(3000);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    const beforeLastPage = pages.slice(0, -1).reduce((sum, units) => sum + units, 0);
    const expectedMs = ((beforeLastPage + PAGE_UNITS) / rate - 1) * 1000;
    expect(clock.now()).toBeCloseTo(expectedMs, 6);
    expect(clock.slept).toHaveLength(pages.length);
  });

  it('never lets the segments of a parallel Scan send, pages in flight included, more than one second ahead of the rate', async () => {
    // Prepare: ~4 MB in four segments (the first list sizes the second), on the real clock; every Scan recorded.
    await putItems(client, tables.inventory, paddedItems(4000));
    const rate = 600;
    const sends: { at: number; units: number }[] = [];
    let start = 0;
    const recordingClient = new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async (command: ScanCommand, options?: object) => {
          const at = Date.now() - start;
          const page = (await target.send(command, options)) as { ConsumedCapacity?: { CapacityUnits?: number } };
          sends.push({ at, units: page.ConsumedCapacity?.CapacityUnits ?? Number.NaN });
          return page;
        };
      },
    });
    const repository = new InventoryTable({
      client: recordingClient,
      tableName: tables.inventory,
      entriesPerSegment: 1000,
      pace: () => new ReadPace(rate, 0),
    });
    await repository.listAll();
    sends.length = 0;
    // Act
    start = Date.now();
    const listed = await repository.listAll();
    // Assess: by each send, the units of the pages sent so far (that one included) are within rate x (1 s + time).
    expect(listed).toHaveLength(4000);
    expect(sends.length).toBeGreaterThanOrEqual(4);
    const ordered = [...sends].sort((a, b) => a.at - b.at);
    let sent = 0;
    for (const send of ordered) {
      sent += send.units;
      expect(sent).toBeLessThanOrEqual(rate * (1 + send.at / 1000));
    }
    expect(ordered.at(-1)?.at).toBeGreaterThan(((sent - (ordered.at(-1)?.units ?? 0)) / rate - 1) * 1000);
  });

  it('reads at full speed, without waiting, when no pace is set', async () => {
    await putItems(client, tables.inventory, paddedItems(3000));
    const clock = virtualClock();
    const repository = new InventoryTable({
      client,
      tableName: tables.inventory,
      pace: () => new ReadPace(0, 0, clock),
    });
    expect(await repository.listAll()).toHaveLength(3000);
    expect(clock.slept).toEqual([]);
  });

  /**
   * The test table behind a stand-in endpoint that throttles the Scans `throttle` picks, read by a client that makes
   * one attempt per call, with a pace of no rate and `throttleWindowMs` on a virtual clock.
   */
  async function throttledTable(
    throttle: (operation: string, index: number, body: string) => boolean,
    throttleWindowMs: number,
    errorType?: string,
    tableOptions: { entriesPerSegment?: number } = {},
  ) {
    const endpoint = await startThrottlingEndpoint(testEndpoint(), throttle, errorType);
    const throttledClient = createDynamoClient({
      endpoint: endpoint.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
      // As testClient's: DynamoDB Local on a busy machine can take seconds for a 1 MB page.
      requestTimeoutMs: 10_000,
    });
    // Every Scan the table sends, and when it settles.
    const sends: { input: ScanCommandInput; settled: Promise<unknown> }[] = [];
    const recordingClient = new Proxy(throttledClient, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return (command: ScanCommand, options?: object) => {
          const sent = target.send(command, options);
          sends.push({ input: command.input, settled: sent.catch(() => undefined) });
          return sent;
        };
      },
    });
    /** Resolves once every Scan sent has settled and a turn of the event loop has sent no new one. */
    const settled = async () => {
      for (let seen = -1; seen !== sends.length; ) {
        seen = sends.length;
        await Promise.all(sends.map((send) => send.settled));
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const clock = virtualClock();
    const repository = new InventoryTable({
      client: recordingClient,
      tableName: tables.inventory,
      pace: () => new ReadPace(0, throttleWindowMs, clock),
      ...tableOptions,
    });
    const close = async () => {
      throttledClient.destroy();
      await endpoint.close();
    };
    return { repository, endpoint, clock, sends, settled, close };
  }

  it.each(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded'])(
    'waits out Scan pages throttled (%s) past the client retries and lists every entry once',
    async (errorType) => {
      // Prepare: every other Scan request throttled.
      await putItems(client, tables.inventory, paddedItems(2600));
      const throttled = await throttledTable((operation, n) => operation === 'Scan' && n % 2 === 0, 60_000, errorType);
      try {
        // Act
        const listed = await throttled.repository.listAll();
        // Assess
        expect(listed.map((item) => item.petId)).toEqual(Array.from({ length: 2600 }, (_, i) => String(i + 1)));
        const scans = throttled.endpoint.calls.filter((call) => call.operation === 'Scan');
        const refused = scans.filter((call) => call.throttled).length;
        expect(refused).toBeGreaterThanOrEqual(3);
        expect(scans.length).toBe(2 * refused);
        expect(throttled.clock.slept).toHaveLength(refused);
        for (const wait of throttled.clock.slept) expect(wait).toBeGreaterThanOrEqual(100);
      } finally {
        await throttled.close();
      }
    },
  );

  it('gives up with StorageUnavailableError once throttling outlasts the window, after backing off, changing nothing', async () => {
    // Prepare: every Scan throttled.
    await putItems(client, tables.inventory, paddedItems(10));
    const before = await snapshotTable(client, tables.inventory);
    const throttled = await throttledTable((operation) => operation === 'Scan', 20_000);
    try {
      // Act + Assess: retried with growing waits (full jitter, so only their bounds are known) until the window
      // would be passed, then the list fails as storage unavailable (a 503 with Retry-After for the client).
      await expect(throttled.repository.listAll()).rejects.toBeInstanceOf(StorageUnavailableError);
      expect(throttled.clock.slept.length).toBeGreaterThanOrEqual(4);
      expect(throttled.clock.now()).toBeLessThanOrEqual(20_000);
      for (const wait of throttled.clock.slept) expect(wait).toBeLessThanOrEqual(5_000);
      expect(throttled.endpoint.calls).toHaveLength(throttled.clock.slept.length + 1);
      expect(await snapshotTable(client, tables.inventory)).toBe(before);
    } finally {
      await throttled.close();
    }
  });

  it('stops the other segments of a parallel Scan once one has failed: no more pages read for a failed list', async () => {
    // Prepare: ~12 MB, so each of 4 segments has about three 1 MB pages; the first list sizes the next at 4 segments.
    await putItems(client, tables.inventory, paddedItems(12_000));
    let armed = false;
    const throttled = await throttledTable(
      (operation, _, body) => armed && operation === 'Scan' && JSON.parse(body).Segment === 0,
      0,
      undefined,
      { entriesPerSegment: 3000 },
    );
    try {
      expect(await throttled.repository.listAll()).toHaveLength(12_000);
      throttled.sends.length = 0;
      armed = true;
      // Act: segment 0 is throttled with no window, so it fails at its first page.
      await expect(throttled.repository.listAll()).rejects.toBeInstanceOf(StorageUnavailableError);
      // Until every Scan sent has settled (answered or aborted): a segment that went on would send its next page
      // right after its page settles, before the next turn of the event loop, so none is missed.
      await throttled.settled();
      // Assess: each segment sent its first page at most, never a next one.
      expect(throttled.sends.length).toBeGreaterThanOrEqual(1);
      expect(throttled.sends.length).toBeLessThanOrEqual(4);
      expect(throttled.sends.every((send) => send.input.ExclusiveStartKey === undefined)).toBe(true);
    } finally {
      await throttled.close();
    }
  });

  it('fails a throttled list at once when its pace gives no throttle window', async () => {
    await putItems(client, tables.inventory, paddedItems(10));
    const throttled = await throttledTable((operation) => operation === 'Scan', 0);
    try {
      await expect(throttled.repository.listAll()).rejects.toBeInstanceOf(StorageUnavailableError);
      expect(throttled.endpoint.calls).toHaveLength(1);
      expect(throttled.clock.slept).toEqual([]);
    } finally {
      await throttled.close();
    }
  });

  it('turns unreachable storage into StorageUnavailableError after the bounded retries', async () => {
    // Prepare: a port nobody listens on, the real SDK client with its bounded retries.
    const deadClient = createDynamoClient({
      endpoint: `http://127.0.0.1:${await freePort()}`,
      maxAttempts: 2,
      requestTimeoutMs: 500,
      connectionTimeoutMs: 300,
    });
    const repository = new InventoryTable({ client: deadClient, tableName: tables.inventory });
    // Act + Assess (how long it takes is a figure of test/load/storage-fault-bounds.test.ts)
    await expect(repository.listAll()).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(repository.setQuantity('1', { quantity: 1 }, ORIGIN)).rejects.toBeInstanceOf(StorageUnavailableError);
    deadClient.destroy();
  });
});
