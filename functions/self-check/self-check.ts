import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiKeyRecord, generateApiKey } from '../api-keys/key';
import type { ApiKeyRepository } from '../api-keys/repository';
import { logger } from '../observability/logger';
import { failedChecks, runSmokeChecks, type SmokeCheckResult, worstSmokeRunMs } from './checks';

/** How long failing checks are retried while a new deployment settles (a fresh host name takes seconds). */
export const SELF_CHECK_SETTLE_MS = 60_000;
/** Pause between two runs of the checks while settling. */
const SELF_CHECK_RETRY_DELAY_MS = 5_000;
/** Time the key's deletion may take after the last run (the DynamoDB client's bounded retries fit in it). */
const DELETE_MARGIN_MS = 10_000;

/** The self-check failed: `message` names every failed check and its problem, and never the key. */
export class SelfCheckFailedError extends Error {
  override readonly name = 'SelfCheckFailedError';
}

export interface SelfCheckOptions {
  /** Where the short-lived key is written and deleted (the stage's keys table). */
  keys: ApiKeyRepository;
  /** The stage's public base URL, ending in `/v1`. */
  baseUrl: string;
  /** Name of the short-lived key, as `keys list` would show it if it were ever left behind. */
  keyName: string;
  /** Milliseconds left before the caller's own time-out (the Lambda context's `getRemainingTimeInMillis`). */
  remainingTimeMs: () => number;
  /** @default {@link SELF_CHECK_SETTLE_MS} */
  settleMs?: number;
  /** @default {@link SELF_CHECK_RETRY_DELAY_MS} */
  retryDelayMs?: number;
}

/**
 * Runs the smoke checks with a key that exists only for the run (deleted whatever happened, never logged); throws
 * {@link SelfCheckFailedError} listing every failed check.
 */
export async function runSelfCheck(options: SelfCheckOptions): Promise<SmokeCheckResult[]> {
  const { key, record } = generateApiKey(options.keyName);
  try {
    await options.keys.create(record);
  } catch (error) {
    throw new SelfCheckFailedError(
      `The self-check could not write its key to the keys table: ${(error as Error).message}`,
      { cause: error },
    );
  }
  logger.info('self-check key created', { keyId: record.keyId, baseUrl: options.baseUrl });
  // The key is deleted whatever happened; a key left behind fails the run even if every check passed.
  const results = await checkUntilSettled(options, key).catch((error: unknown) => ({ error }));
  await deleteKey(options.keys, record);
  if (!Array.isArray(results)) throw results.error;
  const failed = failedChecks(results);
  if (failed.length > 0) {
    throw new SelfCheckFailedError(
      `Self-check of ${options.baseUrl} failed ${failed.length} of ${results.length} checks: ` +
        failed.map(({ name, problem }) => `[${name}] ${problem}`).join('; '),
    );
  }
  logger.info('self-check passed', { baseUrl: options.baseUrl, checks: results.map(({ name }) => name) });
  return results;
}

async function deleteKey(keys: ApiKeyRepository, record: ApiKeyRecord): Promise<void> {
  try {
    await keys.delete(record.keyHash);
    logger.info('self-check key deleted', { keyId: record.keyId });
  } catch (error) {
    logger.error('self-check key not deleted', { keyId: record.keyId, error: error as Error });
    throw new SelfCheckFailedError(
      `The self-check could not delete its key ${record.keyId} ("${record.name}"): revoke it with ` +
        `"npm run cli -- keys revoke ${record.keyId} --stage <stage>".`,
      { cause: error },
    );
  }
}

/** Runs the checks until one run passes, the settle time is over, or no further run could finish in time. */
async function checkUntilSettled(options: SelfCheckOptions, key: string): Promise<SmokeCheckResult[]> {
  const settleUntil = Date.now() + (options.settleMs ?? SELF_CHECK_SETTLE_MS);
  const retryDelayMs = options.retryDelayMs ?? SELF_CHECK_RETRY_DELAY_MS;
  for (let run = 1; ; run++) {
    const results = await runSmokeChecks({ baseUrl: options.baseUrl, key });
    const failed = failedChecks(results);
    // No run starts unless it could finish, every check timing out, before the caller's own time-out.
    const worstRunMs = worstSmokeRunMs() + DELETE_MARGIN_MS;
    const canRetry = Date.now() + retryDelayMs < settleUntil && options.remainingTimeMs() - retryDelayMs > worstRunMs;
    if (failed.length === 0 || !canRetry) return results;
    logger.warn('self-check failed; retrying while the deployment settles', {
      run,
      failed: failed.map(({ name, problem }) => ({ name, problem })),
    });
    await sleep(retryDelayMs);
  }
}
