import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { INVENTORY_LIST_INDEX } from '../../service/names';
import { AdjustmentConflictError, InventoryItemNotFoundError, QuantityConflictError } from '../inventory/errors';
import { comparePetIds, type InventoryRepository, type ListOptions } from '../inventory/repository';
import {
  type ChangeOrigin,
  type InventoryAdjustment,
  type InventoryItem,
  type InventoryUpdate,
  MAX_QUANTITY,
} from '../inventory/types';
import {
  type ListRead,
  MAX_INDEX_ENTRY_BYTES,
  readPage,
  SCAN_PAGE_UNITS,
  ShardHeap,
  ShardReader,
  Slots,
} from './inventory-list-read';
import { MODEL_PROJECTION, PET_ID, toInventoryItem } from './inventory-row';
import { type EntryUpdateSpec, entryUpdate, type unlessRepeated } from './inventory-write';
import { type PaceClock, ReadPace, SYSTEM_CLOCK } from './read-pace';
import { translateStorageError } from './storage-errors';

/** Options of {@link InventoryTable}. */
export interface InventoryTableOptions {
  client: DynamoDBClient;
  tableName: string;
  /**
   * Read units per second one list may average, all its Queries together, counted from what DynamoDB reports
   * (`ConsumedCapacity`). @default 0: full speed
   */
  readUnitsPerSecond?: number;
  /**
   * How long a list waits out throttled pages (past the client's own retries) without a page coming back before it
   * fails. @default 0: a page throttled past the client's retries fails the list
   */
  throttleWindowMs?: number;
  /**
   * A table of fewer entries than this is listed from one Scan page of the table, sorted in memory, instead of a
   * Query per shard of the list index: one round trip instead of 16 for the small inventories many stores keep. A
   * larger table costs that page before the merge; the instance then merges straight away for
   * `largeStoreRecheckMs`. 0 always merges. @default 400: entries as the API and imports sign them (~180 bytes)
   * make that page ~9 read units, about what the merge's 16 first Query pages cost at the least (half a unit each),
   * so a small store's list costs no more units than the merge would, and a larger store's check little
   */
  smallTableEntries?: number;
  /**
   * How long an instance that found the store too large for one Scan page merges straight away before it looks
   * again. @default 600000 (10 minutes)
   */
  largeStoreRecheckMs?: number;
  /** Entries a shard's first Query page asks for: small, so that the first entries leave soon. @default 100 */
  firstPageLimit?: number;
  /** Entries each further Query page asks for. @default 500 */
  pageLimit?: number;
  /**
   * Queries of one list in flight at most, all shards together: the merge wants every shard's next page at about
   * the same time, and a burst of 16 makes each wait on the others at the table (DynamoDB Local above all). @default 4
   */
  queriesInFlight?: number;
  /** Entries per batch the list yields at most. @default 1024 */
  batchSize?: number;
  /** The pace's clock. @default the system's */
  clock?: PaceClock;
}

/**
 * The inventory table, keyed by `petId` (a Number attribute, so int64 ids sort and compare as numbers). It works on
 * the SDK's low-level attribute maps rather than the document client: Number attributes travel as the decimal
 * strings the domain already holds, so int64 ids stay exact with no wrapping or conversion. The list reads the
 * table's list index (service/names.ts, `INVENTORY_LIST_INDEX`), or one Scan page of the table when that page is the
 * whole table (`smallTableEntries`).
 */
export class InventoryTable implements InventoryRepository {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly readUnitsPerSecond: number;
  private readonly throttleWindowMs: number;
  private readonly smallTableEntries: number;
  private readonly firstPageLimit: number;
  private readonly pageLimit: number;
  private readonly batchSize: number;
  private readonly queriesInFlight: number;
  private readonly largeStoreRecheckMs: number;
  private readonly clock: PaceClock;
  /**
   * Until when (the clock's time) this instance's lists skip the Scan page: its last one could not hold the store,
   * or was throttled. Only a hint: either way the list is complete and ordered.
   */
  private mergeUntil = Number.NEGATIVE_INFINITY;

  constructor(options: InventoryTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.readUnitsPerSecond = options.readUnitsPerSecond ?? 0;
    this.throttleWindowMs = options.throttleWindowMs ?? 0;
    this.firstPageLimit = options.firstPageLimit ?? 100;
    this.smallTableEntries = Math.max(0, options.smallTableEntries ?? 400);
    this.largeStoreRecheckMs = options.largeStoreRecheckMs ?? 600_000;
    this.pageLimit = options.pageLimit ?? 500;
    this.batchSize = options.batchSize ?? 1024;
    this.queriesInFlight = Math.max(1, options.queriesInFlight ?? 4);
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /**
   * The entries in petId order. First one Scan page of the table, of at most `smallTableEntries` entries (unless
   * this instance found the store larger a moment ago): when it is the whole table (no `LastEvaluatedKey`), its
   * entries, sorted, are the list. Otherwise, or when that page is throttled past the client's retries (the table's
   * read cap reached: the index has its own), one ordered Query per shard of the list index, merged (a k-way merge
   * on a heap). The first batch is ready once every shard's first page is in; each shard then keeps one page in
   * flight ahead of the merge, so memory holds at most two pages per shard whatever the table's size. A batch is
   * handed on before the merge waits for a page. All reads share the list's pace; the first to fail stops the others. Either way the list holds the entries the index holds (those
   * with a shard), read with eventual consistency.
   */
  async *list(options: ListOptions = {}): AsyncGenerator<InventoryItem[]> {
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (limit <= 0) return;
    const read: ListRead = {
      failure: new AbortController(),
      slots: new Slots(this.queriesInFlight),
      pace: new ReadPace({
        unitsPerSecond: this.readUnitsPerSecond,
        pageUnits: Math.ceil((this.pageLimit * MAX_INDEX_ENTRY_BYTES) / 4096 / 2),
        throttleWindowMs: this.throttleWindowMs,
        clock: this.clock,
      }),
    };
    try {
      if (this.smallTableEntries > 0 && this.clock.now() >= this.mergeUntil) {
        const small = await this.scanSmallTable(read, options.after);
        if (small) {
          const entries = small.slice(0, limit);
          for (let start = 0; start < entries.length; start += this.batchSize)
            yield entries.slice(start, start + this.batchSize);
          return;
        }
        this.mergeUntil = this.clock.now() + this.largeStoreRecheckMs;
      }
      const shards = Array.from(
        { length: INVENTORY_LIST_INDEX.shards },
        (_, shard) =>
          new ShardReader(shard, {
            query: (startKey, pageLimit) => this.queryPage(read, shard, options.after, startKey, pageLimit),
            firstPageLimit: Math.min(this.firstPageLimit, limit),
            pageLimit: Math.min(this.pageLimit, limit),
          }),
      );
      await Promise.all(shards.map((shard) => shard.ready()));
      const heap = new ShardHeap(shards.filter((shard) => shard.current !== undefined));
      let batch: InventoryItem[] = [];
      let listed = 0;
      for (let top = heap.peek(); top !== undefined && listed < limit; top = heap.peek()) {
        batch.push(top.current as InventoryItem);
        listed += 1;
        if (!top.advance()) {
          // Its next page is still on its way: hand on what is merged before waiting for it.
          if (batch.length > 0) {
            yield batch;
            batch = [];
          }
          await top.ready();
        }
        if (top.current === undefined) heap.pop();
        else heap.siftDown();
        if (batch.length >= this.batchSize) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    } catch (error) {
      throw read.error ?? error;
    } finally {
      // Also when the reader stops early (a page is full, the stream failed): no Query keeps running for nobody.
      read.failure.abort();
    }
  }

  /**
   * The table's entries with a shard (those the list index holds), after `after`, sorted by petId, when one Scan page
   * of `smallTableEntries` holds them all; undefined when the table has more, or when the page was throttled.
   */
  private async scanSmallTable(read: ListRead, after: string | undefined): Promise<InventoryItem[] | undefined> {
    const send = (abortSignal: AbortSignal) =>
      this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          // Limit counts the entries read, before the filter: the page never reads more than this many.
          Limit: this.smallTableEntries,
          ProjectionExpression: MODEL_PROJECTION.expression,
          FilterExpression:
            after === undefined ? 'attribute_exists(#shard)' : 'attribute_exists(#shard) AND #petId > :after',
          ExpressionAttributeNames: {
            ...MODEL_PROJECTION.names,
            '#shard': INVENTORY_LIST_INDEX.partition.name,
            ...(after === undefined ? {} : { '#petId': PET_ID }),
          },
          ...(after === undefined ? {} : { ExpressionAttributeValues: { ':after': { N: after } } }),
          ...(read.pace.paced ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
        }),
        { abortSignal },
      );
    const page = await readPage({ read, operation: 'Scan', booking: SCAN_PAGE_UNITS, send }, 'give up');
    // Without LastEvaluatedKey, the page is the last one: the whole table
    // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.Pagination).
    if (page === undefined || page.LastEvaluatedKey) return undefined;
    return (page.Items ?? []).map(toInventoryItem).sort((a, b) => comparePetIds(a.petId, b.petId));
  }

  /** One Query page of a shard. */
  private queryPage(
    read: ListRead,
    shard: number,
    after: string | undefined,
    startKey: Record<string, AttributeValue> | undefined,
    pageLimit: number,
  ): Promise<QueryCommandOutput> {
    const send = (abortSignal: AbortSignal) =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: INVENTORY_LIST_INDEX.name,
          KeyConditionExpression: after === undefined ? '#shard = :shard' : '#shard = :shard AND #petId > :after',
          ExpressionAttributeNames: {
            '#shard': INVENTORY_LIST_INDEX.partition.name,
            ...(after === undefined ? {} : { '#petId': INVENTORY_LIST_INDEX.sort.name }),
          },
          ExpressionAttributeValues: {
            ':shard': { N: String(shard) },
            ...(after === undefined ? {} : { ':after': { N: after } }),
          },
          Limit: pageLimit,
          ExclusiveStartKey: startKey,
          ...(read.pace.paced ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
        }),
        { abortSignal },
      );
    return readPage({ read, operation: 'Query', booking: undefined, send }, 'wait');
  }

  /** A strongly consistent GetItem of one entry, projected to the model's attributes. */
  async get(petId: string): Promise<InventoryItem | undefined> {
    try {
      const result = await this.client.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: { [PET_ID]: { N: petId } },
          ConsistentRead: true,
          ProjectionExpression: MODEL_PROJECTION.expression,
          ExpressionAttributeNames: MODEL_PROJECTION.names,
        }),
      );
      return result.Item ? toInventoryItem(result.Item) : undefined;
    } catch (error) {
      return translateStorageError(error, 'GetItem');
    }
  }

  /**
   * One UpdateItem that adds the delta and sets the entry's `lastChange` together, on condition that the entry
   * exists and the result stays in range (checked on the stored value, so concurrent adjustments never race). A
   * failed condition returns the stored item: 409 with the current quantity, or 404 when there is none. An attempt
   * of a change that already landed (see {@link unlessRepeated}) applies nothing and returns the entry as stored.
   */
  async adjustQuantity(petId: string, adjustment: InventoryAdjustment, origin: ChangeOrigin): Promise<InventoryItem> {
    const { adjustBy } = adjustment;
    // quantity + adjustBy within [0, MAX], written on the stored quantity so no addition can overflow the check.
    const bound =
      adjustBy < 0
        ? { expression: 'quantity >= :bound', value: -adjustBy }
        : { expression: 'quantity <= :bound', value: MAX_QUANTITY - adjustBy };
    return this.updateEntry(
      petId,
      { ...origin, adjustBy },
      {
        quantity: 'quantity + :delta',
        condition: bound.expression,
        values: { ':delta': { N: String(adjustBy) }, ':bound': { N: String(bound.value) } },
      },
      (stored) => new AdjustmentConflictError(petId, adjustBy, stored.quantity),
    );
  }

  /**
   * One UpdateItem that sets the quantity and the entry's `lastChange` together. With `expectedQuantity` the
   * condition also compares the stored quantity, and a failed condition returns the stored item: 409 with the
   * current quantity, or 404 when there is none, without a second read. An attempt of a change that already landed
   * (see {@link unlessRepeated}) writes nothing and returns the entry as stored, where a compare-and-set would
   * otherwise find its own quantity and answer 409.
   */
  async setQuantity(petId: string, update: InventoryUpdate, origin: ChangeOrigin): Promise<InventoryItem> {
    const expected = update.expectedQuantity;
    return this.updateEntry(
      petId,
      origin,
      expected === undefined
        ? { quantity: ':quantity', values: { ':quantity': { N: String(update.quantity) } } }
        : {
            quantity: ':quantity',
            condition: 'quantity = :expected',
            values: { ':quantity': { N: String(update.quantity) }, ':expected': { N: String(expected) } },
          },
      // Without expectedQuantity only a missing entry fails the condition (404).
      (stored) => (expected === undefined ? undefined : new QuantityConflictError(petId, expected, stored.quantity)),
    );
  }

  /**
   * The one conditional UpdateItem both writes are: `quantity` set to `write.quantity` and `lastChange` to the
   * origin, on condition that the entry exists, `write.condition` holds, and this is not an attempt of a change that
   * already landed. A failed condition returns the stored item (`ALL_OLD`), so no second read tells the cases apart:
   * a repeat answers the entry as stored, an entry that breaks the condition is `refused(it)`, and none is 404.
   */
  private async updateEntry(
    petId: string,
    origin: ChangeOrigin,
    write: EntryUpdateSpec,
    refused: (stored: InventoryItem) => Error | undefined,
  ): Promise<InventoryItem> {
    const { input, repeat } = entryUpdate(this.tableName, petId, origin, write);
    try {
      const result = await this.client.send(new UpdateItemCommand(input));
      if (!result.Attributes) throw new Error('UpdateItem returned no attributes');
      return toInventoryItem(result.Attributes);
    } catch (error) {
      if ((error as Error | undefined)?.name === 'ConditionalCheckFailedException') {
        const stored = (error as { Item?: Record<string, AttributeValue> }).Item;
        if (stored && repeat.landed(stored)) return toInventoryItem(stored);
        const refusal = stored ? refused(toInventoryItem(stored)) : undefined;
        throw refusal ?? new InventoryItemNotFoundError(petId);
      }
      return translateStorageError(error, 'UpdateItem');
    }
  }
}
