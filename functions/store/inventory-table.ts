import { createHash } from 'node:crypto';
import {
  type AttributeValue,
  type CancellationReason,
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  type Update,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { INVENTORY_LIST_INDEX } from '../../service/names';
import {
  atChange,
  ConcurrentChangeError,
  InventoryItemNotFoundError,
  StorageUnavailableError,
} from '../inventory/errors';
import type { InventoryRepository, ListOptions } from '../inventory/repository';
import type { ChangeNote, ChangeOrigin, InventoryChange, InventoryItem, PetChange } from '../inventory/types';
import type { TableOptions } from './dynamo-client';
import { LIST_PARTITION, MODEL_PROJECTION, PET_ID, toInventoryItem } from './inventory-row';
import { changeWrite, type ChangeWrite as EntryChange, entryUpdate } from './inventory-write';
import { type PaceClock, ReadPace, SYSTEM_CLOCK } from './read-pace';
import { cancellationReasons, isThrottling, translateStorageError } from './storage-errors';

/** What one list's pages share: where it starts, the signal that stops its reads, and its pace. */
interface ListRead {
  after: string | undefined;
  stop: AbortController;
  pace: ReadPace;
}

export interface InventoryTableOptions extends TableOptions {
  /** Read units per second one list may average (from `ConsumedCapacity`). @default 0: full speed */
  readUnitsPerSecond?: number;
  /** How long a list waits out throttled pages without progress before it fails. @default 0 */
  throttleWindowMs?: number;
  /** Entries each Query page asks for at most, the first no more than 2,500 (docs/performance.md). @default 5000 */
  pageLimit?: number;
  /** The pace's clock. @default the system's */
  clock?: PaceClock;
}

/** Most bytes one entry of the list index holds: a page is booked at this before DynamoDB says its cost. */
const MAX_INDEX_ENTRY_BYTES = 100;

/** Entries the first Query page asks for at most: a small first page lets the first byte leave soon. */
const FIRST_PAGE_LIMIT = 2500;

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
    this.pageLimit = options.pageLimit ?? 5000;
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
        throttleWindowMs: this.throttleWindowMs,
        clock: this.clock,
      }),
    };
    let next = this.queryPage(read, undefined, Math.min(left, FIRST_PAGE_LIMIT));
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
   * One page of at most `left` entries (and `pageLimit`), the model's attributes only, read again while throttled if
   * the pace allows. Marked handled at once: it may fail while the reader still holds the page before.
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
      // The model's attributes, not the index's partition key: a quarter fewer attributes to send and parse per entry.
      ProjectionExpression: MODEL_PROJECTION.expression,
      ExpressionAttributeNames: { '#list': INVENTORY_LIST_INDEX.partition.name, ...MODEL_PROJECTION.names },
      ExpressionAttributeValues: {
        ':list': { N: LIST_PARTITION },
        ...(read.after === undefined ? {} : { ':after': { N: read.after } }),
      },
      Limit: limit,
      ExclusiveStartKey: startKey,
      ...(read.pace.paced ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
    });
    // Eventually consistent: half a unit per 4 KB read.
    const page = this.sendPaced(read, command, Math.ceil((limit * MAX_INDEX_ENTRY_BYTES) / 4096 / 2));
    page.catch(() => undefined);
    return page;
  }

  /** Sends a page once the pace allows its booking (the most its `Limit` entries can cost). */
  private async sendPaced(read: ListRead, command: QueryCommand, booking: number): Promise<QueryCommandOutput> {
    for (;;) {
      await read.pace.beforePage(booking);
      read.stop.signal.throwIfAborted();
      try {
        const page = await this.client.send(command, { abortSignal: read.stop.signal });
        read.pace.consumed(page.ConsumedCapacity?.CapacityUnits, booking);
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

  /**
   * One conditional UpdateItem, its rule checked on the stored value (no race); a failed condition returns the stored
   * item, which tells a landed repeat, a conflict and a 404 apart without a second read.
   */
  async applyChange(petId: string, change: InventoryChange & ChangeNote, origin: ChangeOrigin): Promise<InventoryItem> {
    const { write, signed, unchanged, refused } = changeWrite(petId, change, origin);
    const { input, landed } = entryUpdate(this.tableName, petId, signed, write);
    try {
      const result = await this.client.send(new UpdateItemCommand(input));
      if (!result.Attributes) throw new Error('UpdateItem returned no attributes');
      return toInventoryItem(result.Attributes);
    } catch (error) {
      if ((error as Error | undefined)?.name === 'ConditionalCheckFailedException') {
        const stored = (error as { Item?: Record<string, AttributeValue> }).Item;
        const entry = stored ? toInventoryItem(stored) : undefined;
        if (stored && entry && (landed(stored) || unchanged(entry))) return entry;
        const refusal = entry ? refused(entry) : undefined;
        throw refusal ?? new InventoryItemNotFoundError(petId);
      }
      return translateStorageError(error, 'UpdateItem');
    }
  }

  /**
   * One TransactWriteItems of the very writes {@link applyChange} sends, then one TransactGetItems (serializable, so
   * strongly consistent); a cancelled transaction is told apart by its first failing change's stored item.
   */
  async applyChanges(changes: readonly PetChange[], origin: ChangeOrigin): Promise<InventoryItem[]> {
    let writes = changes.map(({ petId, ...change }, index): ChangeWrite => {
      const { write, signed, unchanged, refused } = changeWrite(petId, change, origin);
      const { update, landed } = entryUpdate(this.tableName, petId, signed, write);
      return { index, petId, update, landed, unchanged, refused };
    });
    const transaction = (token: string | undefined) =>
      this.client.send(
        new TransactWriteItemsCommand({
          TransactItems: writes.map(({ update }) => ({ Update: update })),
          ...(token === undefined ? {} : { ClientRequestToken: token }),
        }),
      );
    // Named after the change, so a request's attempts are one transaction; a resend carries another `at`, which
    // DynamoDB refuses under the same token, so it goes again without one and each entry's changeId tells it apart.
    let token = origin.changeId === undefined ? undefined : clientRequestToken(origin.changeId);
    while (writes.length > 0) {
      try {
        await transaction(token).catch((error: unknown) => {
          if ((error as Error | undefined)?.name !== 'IdempotentParameterMismatchException') throw error;
          return transaction(undefined);
        });
        break;
      } catch (error) {
        const unchanged = this.refuseCancelled(error, writes);
        if (unchanged.length === 0) break;
        // Only changes the entries already match failed: the others go again, as one transaction.
        writes = writes.filter((write) => !unchanged.includes(write));
        token = undefined;
      }
    }
    return this.readEntries(changes);
  }

  /**
   * Throws the error of the first change that cancelled the transaction, unless an entry has this change as its last:
   * all or none applied, so then it landed (a repeat) and the caller reads the entries. Returns the changes that
   * failed only because their entries already are what they ask (empty when the transaction landed).
   */
  private refuseCancelled(error: unknown, writes: readonly ChangeWrite[]): ChangeWrite[] {
    const reasons = cancellationReasons(error) ?? translateStorageError(error, 'TransactWriteItems');
    const landed = reasons.some(
      (reason, index) => reason.Item !== undefined && writes[index]?.landed(reason.Item) === true,
    );
    if (landed) return [];
    const unchanged: ChangeWrite[] = [];
    for (const [index, reason] of reasons.entries()) {
      const write = writes[index];
      if (write === undefined) break;
      const refusal = cancellationError(reason, write);
      if (refusal === 'passed') continue;
      if (refusal === 'unchanged') unchanged.push(write);
      else if (refusal === 'unknown') throw error;
      else throw atChange(refusal ?? new InventoryItemNotFoundError(write.petId), write.index, write.petId);
    }
    if (unchanged.length === 0) throw error;
    return unchanged;
  }

  /** The entries of the changes, in their order, as one TransactGetItems reads them. */
  private async readEntries(changes: readonly PetChange[]): Promise<InventoryItem[]> {
    let responses: { Item?: Record<string, AttributeValue> }[];
    try {
      const result = await this.client.send(
        new TransactGetItemsCommand({
          TransactItems: changes.map(({ petId }) => ({
            Get: {
              TableName: this.tableName,
              Key: { [PET_ID]: { N: petId } },
              ProjectionExpression: MODEL_PROJECTION.expression,
              ExpressionAttributeNames: MODEL_PROJECTION.names,
            },
          })),
        }),
      );
      responses = result.Responses ?? [];
    } catch (error) {
      return translateStorageError(error, 'TransactGetItems');
    }
    return changes.map(({ petId }, index) => {
      const item = responses[index]?.Item;
      if (!item) throw atChange(new InventoryItemNotFoundError(petId), index, petId);
      return toInventoryItem(item);
    });
  }
}

/** A TransactWriteItems ClientRequestToken (at most 36 characters) that names one change across its attempts. */
function clientRequestToken(changeId: string): string {
  return createHash('sha256').update(changeId).digest('base64url').slice(0, 36);
}

/** One change of a transaction: its update, what tells its repeat, and the error its failed condition means. */
interface ChangeWrite extends Pick<EntryChange, 'unchanged' | 'refused'> {
  /** Its place in the request. */
  index: number;
  petId: string;
  update: Update;
  landed: ReturnType<typeof entryUpdate>['landed'];
}

/**
 * What one change's cancellation reason means: `passed` (its write would have held), `unchanged` (the entry already
 * is what it asks), its error (undefined: the entry is missing, 404), or `unknown` (a fault: the original error).
 */
function cancellationError(
  reason: CancellationReason,
  write: ChangeWrite,
): Error | undefined | 'passed' | 'unchanged' | 'unknown' {
  const code = reason.Code ?? 'None';
  if (code === 'None') return 'passed';
  if (code === 'ConditionalCheckFailed') {
    if (!reason.Item) return undefined;
    const stored = toInventoryItem(reason.Item);
    return write.unchanged(stored) ? 'unchanged' : write.refused(stored);
  }
  if (code === 'TransactionConflict') return new ConcurrentChangeError(write.petId);
  if (/Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded/.test(code))
    return new StorageUnavailableError(`TransactWriteItems failed: ${code}`);
  return 'unknown';
}
