import { logger } from '../observability/logger';

/**
 * Processes a batch's records all at once; those that failed, each logged, as the batch item failures Lambda retries
 * (after `onFailure`, e.g. to delay a record's retry).
 */
export async function failedItems<R>(
  records: readonly R[],
  options: {
    process: (record: R) => Promise<void>;
    identify: (record: R) => string;
    onFailure?: (record: R, error: Error) => Promise<void>;
  },
): Promise<{ itemIdentifier: string }[]> {
  // Async, so a record whose processing throws at once fails alone, not the whole batch.
  const outcomes = await Promise.allSettled(records.map(async (record) => options.process(record)));
  const failed = outcomes.flatMap((outcome, index) =>
    outcome.status === 'rejected' ? [{ record: records[index] as R, error: outcome.reason as Error }] : [],
  );
  return Promise.all(
    failed.map(async ({ record, error }) => {
      const itemIdentifier = options.identify(record);
      logger.warn('batch record failed: retried', { itemIdentifier, error });
      await options.onFailure?.(record, error);
      return { itemIdentifier };
    }),
  );
}
