import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { lambdaContext } from './events';

/** A stream-triggered function, as the event source mapping invokes it. */
export type StreamHandler = (
  event: DynamoDBStreamEvent,
  context: Context,
) => Promise<DynamoDBBatchResponse | undefined | null>;

/** A shard's records read and not yet delivered, oldest first, and the attempts at the first batch of them. */
export interface PendingRecords {
  pending: DynamoDBRecord[];
  attempts: number;
}

/** How batches are delivered: the deployed mapping's settings unless a test says otherwise. */
export interface DeliverySettings {
  handler: StreamHandler;
  batchSize: number;
  retryAttempts: number;
  log: (line: string) => void;
}

/** A batch's failure: the records before `retryFrom` are done, the rest is to be retried. */
type BatchFailure = { retryFrom: number; reason: string };

/** Invokes the handler with batches of a shard's pending records until none is left or one is to be retried. */
export function deliverer({ handler, batchSize, retryAttempts, log }: DeliverySettings) {
  let invocation = 0;
  return async (shard: PendingRecords) => {
    while (shard.pending.length > 0) {
      const batch = shard.pending.slice(0, batchSize);
      const context = lambdaContext({ functionName: 'record-history', requestId: `stream-${++invocation}` });
      const failure = await invokeBatch(handler, batch, context, log);
      shard.pending.splice(0, failure?.retryFrom ?? batch.length);
      if (!failure) {
        shard.attempts = 0;
        continue;
      }
      // Records before the lowest failure are done: the rest is a new batch, on its first retry.
      shard.attempts = failure.retryFrom > 0 ? 1 : shard.attempts + 1;
      if (shard.attempts <= retryAttempts) return;
      const given = shard.pending.splice(0, batch.length - failure.retryFrom);
      const [first, last] = [given[0]?.dynamodb?.SequenceNumber, given.at(-1)?.dynamodb?.SequenceNumber];
      log(
        `history: gave up on ${given.length} stream records (${first}..${last}) after ${shard.attempts} attempts: ${failure.reason}`,
      );
      shard.attempts = 0;
    }
  };
}

/**
 * Invokes the handler with one batch: undefined when every record is done, else where to retry from (the lowest
 * reported failure; the start when the function threw or reported an itemIdentifier not in the batch).
 */
async function invokeBatch(
  handler: StreamHandler,
  batch: DynamoDBRecord[],
  context: Context,
  log: (line: string) => void,
): Promise<BatchFailure | undefined> {
  try {
    const failures = (await handler({ Records: batch }, context))?.batchItemFailures ?? [];
    if (failures.length === 0) return undefined;
    const sequenceNumbers = batch.map((record) => record.dynamodb?.SequenceNumber);
    const positions = failures.map((failure) => sequenceNumbers.indexOf(failure?.itemIdentifier));
    return { retryFrom: Math.max(0, Math.min(...positions)), reason: 'batch item failures reported' };
  } catch (error) {
    log(`history: the function failed on a batch of ${batch.length}: ${(error as Error).message}`);
    return { retryFrom: 0, reason: (error as Error).message };
  }
}
