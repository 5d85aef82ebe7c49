import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { INVENTORY_LIST_INDEX } from '../../service/names';
import { AdjustmentConflictError, InventoryItemNotFoundError, QuantityConflictError } from '../inventory/errors';
import type { InventoryRepository, ListOptions } from '../inventory/repository';
import {
  type ChangeOrigin,
  type InventoryAdjustment,
  type InventoryItem,
  type InventoryUpdate,
  MAX_QUANTITY,
} from '../inventory/types';
import type { TableOptions } from './dynamo-client';
import { LIST_PARTITION, MODEL_PROJECTION, PET_ID, toInventoryItem } from './inventory-row';
import { type EntryUpdateSpec, entryUpdate } from './inventory-write';
import { type PaceClock, ReadPace, SYSTEM_CLOCK } from './read-pace';
import { isThrottling, translateStorageError } from './storage-errors';

/** What one list's pages share: where it starts, the signal that stops its reads, and its pace. */
interface ListRead {
  after: string | undefined;
  stop: AbortController;
  pace: ReadPace;
}

/** Options of {@link InventoryTable}. */
export interface InventoryTableOptions extends TableOptions {
  /** Read units per second one list may average (from `ConsumedCapacity`). @default 0: full speed */
  readUnitsPerSecond?: number;
  /** How long a list waits out throttled pages without progress before it fails. @default 0 */
  throttleWindowMs?: number;
  /** Entries each Query page asks for at most (docs/performance.md). @default 2500 */
  pageLimit?: number;
  /** The pace's clock. @default the system's */
  clock?: PaceClock;
}

/** Most bytes one entry of the list index holds: a page is booked at this before DynamoDB says its cost. */
const MAX_INDEX_ENTRY_BYTES = 100;

/**
 * The inventory table, keyed by the Number `petId`, on the SDK's low-level attribute maps: Number attributes travel as
 * the decimal strings the domain holds, so int64 ids stay exact. The list reads `INVENTORY_LIST_INDEX`.
 */
export class InventoryTable implements InventoryRepository {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly readUnitsPerSecond: number;
  private readonly throttleWindowMs: number;
  private readonly pageLimit: number;
  private readonly clock: PaceClock;

  constructor(options: InventoryTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.readUnitsPerSecond = options.readUnitsPerSecond ?? 0;
    this.throttleWindowMs = options.throttleWindowMs ?? 0;
    this.pageLimit = options.pageLimit ?? 2500;
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** The entries in petId order: one paced Query of the list index, each page handed on while the next is read. */
  async *list(options: ListOptions = {}): AsyncGenerator<InventoryItem[]> {
    let left = options.limit ?? Number.POSITIVE_INFINITY;
    if (left <= 0) return;
    const read: ListRead = {
      after: options.after,
      stop: new AbortController(),
      pace: new ReadPace({
        unitsPerSecond: this.readUnitsPerSecond,
        // Eventually consistent: half a unit per 4 KB read.
        pageUnits: Math.ceil((this.pageLimit * MAX_INDEX_ENTRY_BYTES) / 4096 / 2),
        throttleWindowMs: this.throttleWindowMs,
        clock: this.clock,
      }),
    };
    let next = this.queryPage(read, undefined, left);
    try {
      for (;;) {
        const page = await next;
        const rows = (page.Items ?? []).slice(0, left);
        left -= rows.length;
        const more = page.LastEvaluatedKey !== undefined && left > 0;
        if (more) next = this.queryPage(read, page.LastEvaluatedKey, left);
        if (rows.length > 0) yield rows.map(toInventoryItem);
        if (!more) return;
      }
    } finally {
      // Also when the reader stops early (a page is full, the stream failed): no Query keeps running for nobody.
      read.stop.abort();
    }
  }

  /**
   * One page of at most `left` entries, read again while throttled if the pace allows. Marked handled at once: it may
   * fail while the reader still holds the page before.
   */
  private queryPage(
    read: ListRead,
    startKey: Record<string, AttributeValue> | undefined,
    left: number,
  ): Promise<QueryCommandOutput> {
    const limit = Math.min(left, this.pageLimit);
    const command = new QueryCommand({
      TableName: this.tableName,
      IndexName: INVENTORY_LIST_INDEX.name,
      KeyConditionExpression: read.after === undefined ? '#list = :list' : '#list = :list AND #petId > :after',
      ExpressionAttributeNames: {
        '#list': INVENTORY_LIST_INDEX.partition.name,
        ...(read.after === undefined ? {} : { '#petId': INVENTORY_LIST_INDEX.sort.name }),
      },
      ExpressionAttributeValues: {
        ':list': { N: LIST_PARTITION },
        ...(read.after === undefined ? {} : { ':after': { N: read.after } }),
      },
      Limit: limit,
      ExclusiveStartKey: startKey,
      ...(read.pace.paced ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
    });
    const page = this.sendPaced(read, command);
    page.catch(() => undefined);
    return page;
  }

  private async sendPaced(read: ListRead, command: QueryCommand): Promise<QueryCommandOutput> {
    for (;;) {
      await read.pace.beforePage();
      read.stop.signal.throwIfAborted();
      try {
        const page = await this.client.send(command, { abortSignal: read.stop.signal });
        read.pace.consumed(page.ConsumedCapacity?.CapacityUnits);
        return page;
      } catch (error) {
        if (read.stop.signal.aborted || !isThrottling(error) || !(await read.pace.afterThrottle()))
          return translateStorageError(error, 'Query');
      }
    }
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

  /** Adds the delta in one conditional UpdateItem, its range checked on the stored value: no race. */
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

  /** Sets the quantity in one conditional UpdateItem, compared with `expectedQuantity` when given. */
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
   * The conditional UpdateItem of both writes. A failed condition returns the stored item, which tells the cases
   * apart without a second read: a repeat that landed answers it, a refusal is `refused(it)`, no item is 404.
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
