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

/** A failed batch is retried whole, where Lambda resumes at the lowest failure: the history function keys each row
 * by its record's sequence number, so a row written twice is the same row and the history ends the same. */
export function deliverer({ handler, batchSize, retryAttempts, log }: DeliverySettings) {
  let invocation = 0;
  return async (shard: PendingRecords) => {
    while (shard.pending.length > 0) {
      const batch = shard.pending.slice(0, batchSize);
      const context = lambdaContext({ functionName: 'record-history', requestId: `stream-${++invocation}` });
      const failure = await invokeBatch(handler, batch, context, log);
      if (failure !== undefined && ++shard.attempts <= retryAttempts) return;
      if (failure !== undefined) {
        const [first, last] = [batch[0]?.dynamodb?.SequenceNumber, batch.at(-1)?.dynamodb?.SequenceNumber];
        log(
          `history: gave up on a batch of ${batch.length} stream records (${first}..${last}) after ${shard.attempts} attempts: ${failure}`,
        );
      }
      shard.pending.splice(0, batch.length);
      shard.attempts = 0;
    }
  };
}

/** Invokes the handler with one batch: undefined when every record is done, else why it failed. */
async function invokeBatch(
  handler: StreamHandler,
  batch: DynamoDBRecord[],
  context: Context,
  log: (line: string) => void,
): Promise<string | undefined> {
  try {
    const failures = (await handler({ Records: batch }, context))?.batchItemFailures ?? [];
    return failures.length === 0 ? undefined : 'batch item failures reported';
  } catch (error) {
    log(`history: the function failed on a batch of ${batch.length}: ${(error as Error).message}`);
    return (error as Error).message;
  }
}
