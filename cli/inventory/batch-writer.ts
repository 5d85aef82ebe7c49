import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  type BatchWriteItemCommandOutput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { batchesOf } from '../../functions/inventory/json';
import type { InventoryItem } from '../../functions/inventory/types';
import { backoffDelayMs } from '../../functions/store/backoff';
import { inventoryAttributes } from '../../functions/store/inventory-row';

/** BatchWriteItem takes at most 25 requests. */
export const BATCH_SIZE = 25;

/** The one call the writer needs from a DynamoDBClient (a fake in unit tests). */
export interface BatchWriteClient {
  send(command: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput>;
}

export interface WriteInventoryOptions<T extends InventoryItem = InventoryItem> {
  client: BatchWriteClient;
  tableName: string;
  /** The stored form of an item, built when its batch is first sent. @default inventoryAttributes */
  toItem?: (item: T) => Record<string, AttributeValue>;
  /** Batches in flight at once. @default 8 */
  concurrency?: number;
  /** Attempts per batch before giving up on items DynamoDB keeps returning unprocessed. @default 10 */
  maxAttempts?: number;
  /** First back-off ceiling. @default 50 */
  baseDelayMs?: number;
  /** Largest back-off ceiling. @default 5000 */
  maxDelayMs?: number;
  /** Called with the running total of items written. */
  onProgress?: (written: number) => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

interface WriteResult {
  written: number;
  /** BatchWriteItem calls that re-sent unprocessed items. */
  retries: number;
}

/** Some items were not written; `written` were. Running the same import again finishes it (puts are idempotent). */
export class IncompleteWriteError extends Error {
  override readonly name = 'IncompleteWriteError';
  constructor(
    readonly written: number,
    readonly total: number,
    options: { cause?: unknown },
  ) {
    super(`wrote ${written} of ${total} items`, options);
  }
}

/**
 * BatchWriteItem puts, `concurrency` calls in flight, unprocessed items re-sent with jittered back-off; a throttled or
 * failed call is the SDK client's to retry.
 * @throws IncompleteWriteError when a batch fails for good; no new batch starts after that.
 */
export async function writeInventory<T extends InventoryItem>(
  items: readonly T[],
  options: WriteInventoryOptions<T>,
): Promise<WriteResult> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 10);
  const baseDelayMs = options.baseDelayMs ?? 50;
  const maxDelayMs = options.maxDelayMs ?? 5000;
  const wait = options.sleep ?? sleep;
  const random = options.random ?? Math.random;
  const toItem = options.toItem ?? inventoryAttributes;
  let written = 0;
  let retries = 0;

  const writeBatch = async (batch: readonly T[]) => {
    let pending: WriteRequest[] = batch.map((item) => ({ PutRequest: { Item: toItem(item) } }));
    for (let attempt = 1; ; attempt++) {
      const result = await options.client.send(
        new BatchWriteItemCommand({ RequestItems: { [options.tableName]: pending } }),
      );
      const unprocessed = result.UnprocessedItems?.[options.tableName] ?? [];
      written += pending.length - unprocessed.length;
      if (pending.length !== unprocessed.length) options.onProgress?.(written);
      if (unprocessed.length === 0) return;
      if (attempt >= maxAttempts)
        throw new Error(`DynamoDB left ${unprocessed.length} items unprocessed after ${maxAttempts} attempts`);
      pending = unprocessed;
      retries++;
      await wait(backoffDelayMs(attempt, baseDelayMs, maxDelayMs, random));
    }
  };

  const failure = await eachBatch([...batchesOf(items, BATCH_SIZE)], options.concurrency, writeBatch);
  if (failure !== undefined) throw new IncompleteWriteError(written, items.length, { cause: failure });
  return { written, retries };
}

/** Writes each batch, `concurrency` (default 8) in flight; none starts after a failure. @returns the first failure */
export async function eachBatch<B>(
  batches: readonly B[],
  concurrency: number | undefined,
  write: (batch: B) => Promise<void>,
): Promise<unknown> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (failure === undefined && next < batches.length) {
      await write(batches[next++] as B).catch((error: unknown) => {
        failure ??= error;
      });
    }
  };
  const workers = Math.min(Math.max(1, concurrency ?? 8), batches.length);
  await Promise.all(Array.from({ length: workers }, worker));
  return failure;
}
