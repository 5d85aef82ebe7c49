/**
 * The machinery under InventoryTable's list: what one list's reads share (slots, the pace, and the first failure,
 * which stops them all), the paced read of one page (`readPage`, for the small store's Scan page and the shards'
 * Query pages alike), and the parts of the ordered merge, a reader per shard and a heap of them. The table builds the
 * requests and runs the merge (`list`); nothing here names the table or its index.
 */

import type { AttributeValue, QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import { comparePetIds } from '../inventory/repository';
import type { InventoryItem } from '../inventory/types';
import { toInventoryItem } from './inventory-row';
import type { ReadPace } from './read-pace';
import { isThrottling, translateStorageError } from './storage-errors';

/**
 * Most bytes one entry of the list index can hold (petId of 20 characters, shard, quantity, `available`, with the
 * attribute names), rounded up: what a page is booked at before DynamoDB says what it cost.
 */
export const MAX_INDEX_ENTRY_BYTES = 100;

/**
 * Most read units one eventually consistent Scan page can cost: a page stops at 1 MB read, and each 4 KB costs half
 * a unit (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html). What the
 * small table's page is booked at: the table's items, unlike the index's entries, may hold attributes of any size.
 */
export const SCAN_PAGE_UNITS = (1024 * 1024) / 4096 / 2;

/** What a page of a list's read reports: the read units it consumed, when asked. */
interface PageOutput {
  ConsumedCapacity?: { CapacityUnits?: number };
}

/** One page of a list's read: the list's shared state, the operation, its booking in the pace, and how to send it. */
interface PageRead<Page extends PageOutput> {
  read: ListRead;
  operation: 'Query' | 'Scan';
  booking: number | undefined;
  send: (abortSignal: AbortSignal) => Promise<Page>;
}

/** What the reads of one list share: their slots, its pace, and the first failure, which stops them all. */
export interface ListRead {
  failure: AbortController;
  slots: Slots;
  pace: ReadPace;
  error?: unknown;
}

/**
 * One page of a list's read, in one of its slots and at its pace (booked at `booking` units, the pace's page
 * figure unless given). A page throttled past the client's retries is read again while the pace allows
 * (`'wait'`), or given up at once, undefined, for the caller to read elsewhere (`'give up'`).
 */
export async function readPage<Page extends PageOutput>(page: PageRead<Page>, whenThrottled: 'wait'): Promise<Page>;
export async function readPage<Page extends PageOutput>(
  page: PageRead<Page>,
  whenThrottled: 'give up',
): Promise<Page | undefined>;
export async function readPage<Page extends PageOutput>(
  { read, operation, booking, send }: PageRead<Page>,
  whenThrottled: 'wait' | 'give up',
): Promise<Page | undefined> {
  for (;;) {
    let throttled: unknown;
    await read.slots.acquire();
    try {
      await read.pace.beforePage(booking);
      read.failure.signal.throwIfAborted();
      const page = await send(read.failure.signal);
      read.pace.consumed(page.ConsumedCapacity?.CapacityUnits, booking);
      return page;
    } catch (error) {
      if (read.failure.signal.aborted) throw read.error ?? error;
      if (!isThrottling(error)) failList(read, error, operation);
      if (whenThrottled === 'give up') return undefined;
      throttled = error;
    } finally {
      read.slots.release();
    }
    // Throttled: wait out of the slot, so other shards' pages may go meanwhile.
    if (!(await read.pace.afterThrottle())) failList(read, throttled, operation);
  }
}

/** Fails a list with its first failure (storage trouble as StorageUnavailableError) and stops its other reads. */
function failList(read: ListRead, error: unknown, operation: 'Query' | 'Scan'): never {
  try {
    translateStorageError(error, operation);
  } catch (translated) {
    read.error ??= translated;
  }
  read.failure.abort();
  throw read.error;
}

/** A counting semaphore: at most `size` holders at once, the others waiting in order. */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

/** A page asked for and, once `done`, what came back. Never rejects: a failure is kept until the page is used. */
interface PendingPage {
  promise: Promise<void>;
  done: boolean;
  page?: QueryCommandOutput;
  error?: unknown;
}

/** One shard's ordered Query, page by page, with the next page in flight while the current one is merged. */
export class ShardReader {
  /** The shard's next entry in petId order; undefined once the shard is exhausted. */
  current: InventoryItem | undefined;
  private rows: Record<string, AttributeValue>[] = [];
  private index = 0;
  private pending: PendingPage | undefined;
  private readonly query: (
    startKey: Record<string, AttributeValue> | undefined,
    limit: number,
  ) => Promise<QueryCommandOutput>;
  private readonly pageLimit: number;

  constructor(
    readonly shard: number,
    options: {
      query: (startKey: Record<string, AttributeValue> | undefined, limit: number) => Promise<QueryCommandOutput>;
      firstPageLimit: number;
      pageLimit: number;
    },
  ) {
    this.query = options.query;
    this.pageLimit = options.pageLimit;
    this.request(undefined, options.firstPageLimit);
  }

  /** Waits for the page in flight, if `current` needs it. @throws the page's failure */
  async ready(): Promise<void> {
    while (this.index >= this.rows.length && this.pending) {
      await this.pending.promise;
      this.take();
    }
    this.setCurrent();
  }

  /** Moves to the next entry; false when that needs the page still in flight (then call {@link ready}). */
  advance(): boolean {
    this.index += 1;
    while (this.index >= this.rows.length && this.pending) {
      if (!this.pending.done) return false;
      this.take();
    }
    this.setCurrent();
    return true;
  }

  private setCurrent(): void {
    const row = this.rows[this.index];
    this.current = row === undefined ? undefined : toInventoryItem(row);
  }

  /** Makes the arrived page current and asks for the one after it. */
  private take(): void {
    const pending = this.pending as PendingPage;
    if (pending.error !== undefined || !pending.page) throw pending.error;
    this.rows = pending.page.Items ?? [];
    this.index = 0;
    this.pending = undefined;
    if (pending.page.LastEvaluatedKey) this.request(pending.page.LastEvaluatedKey, this.pageLimit);
  }

  private request(startKey: Record<string, AttributeValue> | undefined, limit: number): void {
    const pending: PendingPage = { done: false, promise: Promise.resolve() };
    pending.promise = this.query(startKey, limit).then(
      (page) => {
        pending.page = page;
        pending.done = true;
      },
      (error: unknown) => {
        pending.error = error ?? new Error('Query failed');
        pending.done = true;
      },
    );
    this.pending = pending;
  }
}

/** The shards with entries left, as a binary min-heap on their current petId. */
export class ShardHeap {
  private readonly heap: ShardReader[];

  constructor(shards: ShardReader[]) {
    this.heap = shards;
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.siftDownFrom(i);
  }

  peek(): ShardReader | undefined {
    return this.heap[0];
  }

  /** Removes the top shard (exhausted). */
  pop(): void {
    const last = this.heap.pop();
    if (last && this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDownFrom(0);
    }
  }

  /** Restores the order after the top shard moved to its next entry. */
  siftDown(): void {
    this.siftDownFrom(0);
  }

  private siftDownFrom(start: number): void {
    const heap = this.heap;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && this.less(left, least)) least = left;
      if (right < heap.length && this.less(right, least)) least = right;
      if (least === i) return;
      [heap[i], heap[least]] = [heap[least] as ShardReader, heap[i] as ShardReader];
      i = least;
    }
  }

  private less(a: number, b: number): boolean {
    const x = (this.heap[a] as ShardReader).current as InventoryItem;
    const y = (this.heap[b] as ShardReader).current as InventoryItem;
    return comparePetIds(x.petId, y.petId) < 0;
  }
}
