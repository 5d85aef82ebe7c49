import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  ScanCommand,
  type ScanCommandOutput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { INVENTORY_TABLE_KEY } from '../../service/names';
import { AdjustmentConflictError, InventoryItemNotFoundError, QuantityConflictError } from '../inventory/errors';
import { comparePetIds, type InventoryRepository } from '../inventory/repository';
import {
  type ChangeOrigin,
  type InventoryAdjustment,
  type InventoryItem,
  type InventoryUpdate,
  isPetStatus,
  MAX_QUANTITY,
} from '../inventory/types';
import { isThrottling, MalformedRowError, translateStorageError } from './storage-errors';

/** Options of {@link InventoryTable}. */
export interface InventoryTableOptions {
  client: DynamoDBClient;
  tableName: string;
  /**
   * Most parallel Scan segments `listAll` uses.
   * @default 4
   */
  maxScanSegments?: number;
  /**
   * Entries per Scan segment when sizing a parallel Scan from the previous list.
   * @default 25000
   */
  entriesPerSegment?: number;
  /**
   * A new pace for each list (`ReadPace`, functions/store/read-pace.ts): keeps its Scan to a rate of read units and
   * waits out throttled pages. @default none: full speed, and a page throttled past the client's retries fails
   */
  pace?: () => ScanPace;
}

/** How a list's Scan is kept to a rate and what it does when a page is throttled; see `ReadPace`. */
export interface ScanPace {
  /** Whether pages should report their consumed capacity. */
  readonly paced: boolean;
  /** Waits, if need be, before the next page. */
  beforePage(): Promise<void>;
  /** Counts what a page consumed. */
  consumed(units: number | undefined): void;
  /** Waits before a throttled page is read again; false when it must not be. */
  afterThrottle(): Promise<boolean>;
}

/**
 * The inventory table, keyed by `petId` (a Number attribute, so int64 ids sort and compare as numbers). It works on
 * the SDK's low-level attribute maps rather than the document client: Number attributes travel as the decimal
 * strings the domain already holds, so int64 ids stay exact with no wrapping or conversion.
 */
export class InventoryTable implements InventoryRepository {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly maxScanSegments: number;
  private readonly entriesPerSegment: number;
  private readonly pace: (() => ScanPace) | undefined;
  /** Entries the previous list of this instance found; unknown until the first. */
  private lastListed: number | undefined;

  constructor(options: InventoryTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.maxScanSegments = options.maxScanSegments ?? 4;
    this.entriesPerSegment = options.entriesPerSegment ?? 25_000;
    this.pace = options.pace;
  }

  /**
   * Every entry, sorted by petId. A large table is read as a parallel Scan sized from the previous list; the first
   * list of an instance (a cold start) reads one segment, so a small store pays one connection, not four. All
   * segments share the list's pace.
   */
  async listAll(): Promise<InventoryItem[]> {
    const total = this.scanSegmentsFor(this.lastListed);
    const pace = this.pace?.();
    // The first segment to fail stops the others: the list has failed, and their pages would only cost read units.
    const failure = new AbortController();
    const segments = await Promise.all(
      Array.from({ length: total }, (_, segment) => this.scanSegment(segment, total, failure, pace)),
    );
    const items = segments.flat().sort((a, b) => comparePetIds(a.petId, b.petId));
    this.lastListed = items.length;
    return items;
  }

  /** How many Scan segments a list of about `entries` entries gets. */
  scanSegmentsFor(entries: number | undefined): number {
    if (entries === undefined) return 1;
    return Math.min(this.maxScanSegments, Math.max(1, Math.ceil(entries / this.entriesPerSegment)));
  }

  /** A strongly consistent GetItem of one entry, projected to the model's attributes. */
  async get(petId: string): Promise<InventoryItem | undefined> {
    try {
      const result = await this.client.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: { petId: { N: petId } },
          ConsistentRead: true,
          ProjectionExpression: 'petId, quantity, #status',
          ExpressionAttributeNames: { '#status': 'status' },
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
   * failed condition returns the stored item: 409 with the current quantity, or 404 when there is none.
   */
  async adjustQuantity(petId: string, adjustment: InventoryAdjustment, origin: ChangeOrigin): Promise<InventoryItem> {
    const { adjustBy } = adjustment;
    // quantity + adjustBy within [0, MAX], written on the stored quantity so no addition can overflow the check.
    const bound =
      adjustBy < 0
        ? { expression: 'quantity >= :bound', value: -adjustBy }
        : { expression: 'quantity <= :bound', value: MAX_QUANTITY - adjustBy };
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { petId: { N: petId } },
          UpdateExpression: `SET quantity = quantity + :delta, ${LAST_CHANGE} = :change`,
          ConditionExpression: `attribute_exists(petId) AND ${bound.expression}`,
          ExpressionAttributeValues: {
            ':delta': { N: String(adjustBy) },
            ':bound': { N: String(bound.value) },
            ':change': changeOriginAttribute({ ...origin, adjustBy }),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      if (!result.Attributes) throw new Error('UpdateItem returned no attributes');
      return toInventoryItem(result.Attributes);
    } catch (error) {
      if ((error as Error | undefined)?.name === 'ConditionalCheckFailedException') {
        const stored = (error as { Item?: Record<string, AttributeValue> }).Item;
        if (stored) throw new AdjustmentConflictError(petId, adjustBy, toInventoryItem(stored).quantity);
        throw new InventoryItemNotFoundError(petId);
      }
      return translateStorageError(error, 'UpdateItem');
    }
  }

  /**
   * One UpdateItem that sets the quantity and the entry's `lastChange` together. With `expectedQuantity` the
   * condition also compares the stored quantity, and a failed condition returns the stored item: 409 with the
   * current quantity, or 404 when there is none, without a second read.
   */
  async setQuantity(petId: string, update: InventoryUpdate, origin: ChangeOrigin): Promise<InventoryItem> {
    const expected = update.expectedQuantity;
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [PET_ID]: { N: petId } },
          UpdateExpression: `SET quantity = :quantity, ${LAST_CHANGE} = :change`,
          ConditionExpression:
            expected === undefined
              ? `attribute_exists(${PET_ID})`
              : `attribute_exists(${PET_ID}) AND quantity = :expected`,
          ExpressionAttributeValues: {
            ':quantity': { N: String(update.quantity) },
            ':change': changeOriginAttribute(origin),
            ...(expected === undefined ? {} : { ':expected': { N: String(expected) } }),
          },
          ReturnValues: 'ALL_NEW',
          ...(expected === undefined ? {} : { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const }),
        }),
      );
      if (!result.Attributes) throw new Error('UpdateItem returned no attributes');
      return toInventoryItem(result.Attributes);
    } catch (error) {
      if ((error as Error | undefined)?.name === 'ConditionalCheckFailedException') {
        const stored = (error as { Item?: Record<string, AttributeValue> }).Item;
        if (stored && expected !== undefined)
          throw new QuantityConflictError(petId, expected, toInventoryItem(stored).quantity);
        throw new InventoryItemNotFoundError(petId);
      }
      return translateStorageError(error, 'UpdateItem');
    }
  }

  /**
   * Reads every page of one Scan segment at the list's pace; a throttled page is read again when the pace allows.
   * A segment that fails aborts `failure`, which stops the others (in flight or before their next page).
   */
  private async scanSegment(
    segment: number,
    totalSegments: number,
    failure: AbortController,
    pace?: ScanPace,
  ): Promise<InventoryItem[]> {
    const items: InventoryItem[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    for (;;) {
      await pace?.beforePage();
      failure.signal.throwIfAborted();
      let page: ScanCommandOutput;
      try {
        page = await this.client.send(
          new ScanCommand({
            TableName: this.tableName,
            ConsistentRead: true,
            ...(totalSegments > 1 ? { Segment: segment, TotalSegments: totalSegments } : {}),
            ProjectionExpression: 'petId, quantity, #status',
            ExpressionAttributeNames: { '#status': 'status' },
            ExclusiveStartKey: startKey,
            ...(pace?.paced ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
          }),
          { abortSignal: failure.signal },
        );
      } catch (error) {
        if (pace && isThrottling(error) && (await pace.afterThrottle())) continue;
        failure.abort();
        return translateStorageError(error, 'Scan');
      }
      pace?.consumed(page.ConsumedCapacity?.CapacityUnits);
      for (const row of page.Items ?? []) items.push(toInventoryItem(row));
      startKey = page.LastEvaluatedKey;
      if (!startKey) return items;
    }
  }
}

/** The table's key attribute (service/names.ts): the entry's petId. */
const PET_ID = INVENTORY_TABLE_KEY.name;

/** The attribute where every writer puts who and why (a {@link ChangeOrigin}), in the write that changes the entry. */
export const LAST_CHANGE = 'lastChange';

/** A ChangeOrigin as the Map attribute the table stores. */
export function changeOriginAttribute(origin: ChangeOrigin): AttributeValue {
  return {
    M: {
      source: { S: origin.source },
      actor: { S: origin.actor },
      at: { S: origin.at },
      ...(origin.requestId === undefined ? {} : { requestId: { S: origin.requestId } }),
      ...(origin.adjustBy === undefined ? {} : { adjustBy: { N: String(origin.adjustBy) } }),
    },
  };
}

/** Reads the `lastChange` of a stored row; undefined when the writer left none or it breaks the model. */
export function toChangeOrigin(row: Record<string, AttributeValue>): ChangeOrigin | undefined {
  const change = row[LAST_CHANGE]?.M;
  const source = change?.source?.S;
  const actor = change?.actor?.S;
  const at = change?.at?.S;
  if ((source !== 'api' && source !== 'import') || actor === undefined || at === undefined) return undefined;
  const requestId = change?.requestId?.S;
  const adjustBy = change?.adjustBy?.N === undefined ? undefined : Number(change.adjustBy.N);
  return {
    source,
    actor,
    at,
    ...(requestId === undefined ? {} : { requestId }),
    ...(adjustBy === undefined || !Number.isSafeInteger(adjustBy) ? {} : { adjustBy }),
  };
}

/** An entry as the attribute map the table stores (petId and quantity as Number attributes). */
export function inventoryAttributes(item: InventoryItem): Record<string, AttributeValue> {
  return { [PET_ID]: { N: item.petId }, quantity: { N: String(item.quantity) }, status: { S: item.status } };
}

/** An entry as a writer other than the API stores it: the entry and who wrote it, in one item. */
export function signedInventoryAttributes(item: InventoryItem, origin: ChangeOrigin): Record<string, AttributeValue> {
  return { ...inventoryAttributes(item), [LAST_CHANGE]: changeOriginAttribute(origin) };
}

/** Converts a stored row; a row that breaks the model is a {@link MalformedRowError}, not a client error. */
export function toInventoryItem(row: Record<string, AttributeValue>): InventoryItem {
  const petId = row[PET_ID]?.N;
  const quantity = row.quantity?.N;
  const status = row.status?.S;
  const refuse = (attribute: string) => new MalformedRowError('InventoryItem', petId ?? '?', attribute);
  if (petId === undefined) throw refuse('petId');
  if (quantity === undefined) throw refuse('quantity');
  if (!isPetStatus(status)) throw refuse('status');
  return { petId, quantity: Number(quantity), status };
}
