import { setTimeout as sleep } from 'node:timers/promises';
import { TransactWriteItemsCommand, type TransactWriteItemsCommandOutput } from '@aws-sdk/client-dynamodb';
import { batchesOf } from '../../functions/inventory/json';
import type { ChangeOrigin, InventoryItem } from '../../functions/inventory/types';
import { backoffDelayMs } from '../../functions/store/backoff';
import { importUpdate } from '../../functions/store/inventory-write';
import { cancellationReasons } from '../../functions/store/storage-errors';
import { eachBatch, IncompleteWriteError } from './batch-writer';

/** TransactWriteItems takes at most 100 actions. */
const ROWS_PER_TRANSACTION = 100;

/** The one call the import needs from a DynamoDBClient. */
export interface ImportClient {
  send(command: TransactWriteItemsCommand): Promise<TransactWriteItemsCommandOutput>;
}

export interface ImportRowsOptions {
  client: ImportClient;
  tableName: string;
  /** Who and why, signed on each row when its transaction is sent. */
  origin: () => ChangeOrigin;
  /** Transactions in flight at once. @default 8 */
  concurrency?: number;
  /** Attempts per transaction that crossed another writer's before giving up. @default 10 */
  maxAttempts?: number;
  /** Called with the running total of rows done (written, or found already as they say). */
  onProgress?: (done: number) => void;
}

/**
 * Writes the rows in transactions of 100 conditional updates ({@link importUpdate}), `concurrency` in flight: an
 * entry's version goes on from the stored one, which a BatchWriteItem put would reset. Rows whose entries already
 * hold them cancel a transaction and are left out of its next attempt; a throttled or failed call is the SDK
 * client's to retry (its retries keep the transaction's token, so none applies twice).
 * @throws IncompleteWriteError when a transaction fails for good; no new one starts after that.
 */
export async function importRows(
  items: readonly InventoryItem[],
  options: ImportRowsOptions,
): Promise<{ written: number; unchanged: number }> {
  const maxAttempts = options.maxAttempts ?? 10;
  let written = 0;
  let unchanged = 0;
  const writeBatch = async (batch: readonly InventoryItem[]) => {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const origin = options.origin();
      const updates = pending.map((item) => ({ Update: importUpdate(options.tableName, item, origin) }));
      try {
        await options.client.send(new TransactWriteItemsCommand({ TransactItems: updates }));
        written += pending.length;
        pending = [];
      } catch (error) {
        const reasons = cancellationReasons(error);
        const held = pending.filter((_, index) => reasons?.[index]?.Code === 'ConditionalCheckFailed');
        const crossed = reasons?.some((reason) => reason.Code === 'TransactionConflict') ?? false;
        if ((held.length === 0 && !crossed) || attempt >= maxAttempts) throw error;
        unchanged += held.length;
        pending = pending.filter((item) => !held.includes(item));
        if (crossed) await sleep(backoffDelayMs(attempt, 50, 2000));
      }
    }
    options.onProgress?.(written + unchanged);
  };
  const failure = await eachBatch([...batchesOf(items, ROWS_PER_TRANSACTION)], options.concurrency, writeBatch);
  if (failure !== undefined) throw new IncompleteWriteError(written + unchanged, items.length, { cause: failure });
  return { written, unchanged };
}
