import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiKeyRecord, type ApiKeyScope, generateApiKey } from '../api-keys/key';
import type { ApiKeyRepository } from '../api-keys/repository';
import { logger } from '../observability/logger';
import { type CheckResult, failedChecks, runApiChecks, worstCheckRunMs } from './checks';

/** How long failing checks are retried while a new deployment settles (a fresh host name takes seconds). */
export const SELF_CHECK_SETTLE_MS = 60_000;
/** Pause between two runs of the checks while settling. */
const SELF_CHECK_RETRY_DELAY_MS = 5_000;
/** Time the keys' deletion may take after the last run (the DynamoDB client's bounded retries fit in it). */
const DELETE_MARGIN_MS = 10_000;

/** A deploy check failed: `message` names every failed check and its problem, and never a key. */
export class SelfCheckFailedError extends Error {
  override readonly name = 'SelfCheckFailedError';
}

/**
 * Runs `use` with a key of each scope that exists only meanwhile in the keys table (deleted whatever happened, never
 * logged). @throws SelfCheckFailedError when a key cannot be written or deleted (naming how to revoke it)
 */
export async function withShortLivedKeys<T>(
  keys: ApiKeyRepository,
  name: string,
  use: (secrets: Record<ApiKeyScope, string>) => Promise<T>,
): Promise<T> {
  const write = generateApiKey(`${name} (write)`, new Date(), 'write');
  const read = generateApiKey(`${name} (read)`, new Date(), 'read');
  const created: ApiKeyRecord[] = [];
  let outcome: { value: T } | { error: unknown };
  try {
    for (const { record } of [write, read]) {
      await keys.create(record).catch((error: unknown) => {
        throw new SelfCheckFailedError(`Could not write a check key to the keys table: ${(error as Error).message}`, {
          cause: error,
        });
      });
      created.push(record);
      logger.info('check key created', { keyId: record.keyId });
    }
    outcome = { value: await use({ write: write.key, read: read.key }) };
  } catch (error) {
    outcome = { error };
  }
  // Every key is deleted whatever happened; a key left behind fails the run even if every check passed.
  const undeleted = (await Promise.all(created.map((record) => deleteKey(keys, record)))).flat();
  if (undeleted.length > 0)
    throw new SelfCheckFailedError(
      `Could not delete the check keys ${undeleted.map(({ keyId, name }) => `${keyId} ("${name}")`).join(', ')}: ` +
        `revoke each with "npm run cli -- keys revoke <keyId> --stage <stage>".`,
    );
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

/** Deletes a key's row: nothing, or the key when it could not. */
async function deleteKey(keys: ApiKeyRepository, record: ApiKeyRecord): Promise<ApiKeyRecord[]> {
  try {
    await keys.delete(record.keyHash);
    logger.info('check key deleted', { keyId: record.keyId });
    return [];
  } catch (error) {
    logger.error('check key not deleted', { keyId: record.keyId, error: error as Error });
    return [record];
  }
}

export interface SelfCheckOptions {
  /** Where the short-lived keys are written and deleted (the stage's keys table). */
  keys: ApiKeyRepository;
  /** The stage's public base URL, ending in `/v1`. */
  baseUrl: string;
  /** Name of the short-lived keys, as `keys list` would show them if one were ever left behind. */
  keyName: string;
  /** Milliseconds left before the caller's own time-out (the Lambda context's `getRemainingTimeInMillis`). */
  remainingTimeMs: () => number;
  /** @default {@link SELF_CHECK_SETTLE_MS} */
  settleMs?: number;
  /** @default {@link SELF_CHECK_RETRY_DELAY_MS} */
  retryDelayMs?: number;
}

/** Sends every check through the API with short-lived keys; throws {@link SelfCheckFailedError} naming each failure. */
export async function runSelfCheck(options: SelfCheckOptions): Promise<CheckResult[]> {
  const results = await withShortLivedKeys(options.keys, options.keyName, (secrets) =>
    checkUntilSettled(options, secrets),
  );
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

/** Runs the checks until one run passes, the settle time is over, or no further run could finish in time. */
async function checkUntilSettled(options: SelfCheckOptions, keys: Record<ApiKeyScope, string>): Promise<CheckResult[]> {
  const settleUntil = Date.now() + (options.settleMs ?? SELF_CHECK_SETTLE_MS);
  const retryDelayMs = options.retryDelayMs ?? SELF_CHECK_RETRY_DELAY_MS;
  for (let run = 1; ; run++) {
    const results = await runApiChecks({ baseUrl: options.baseUrl, keys });
    const failed = failedChecks(results);
    // No run starts unless it could finish, every check timing out, before the caller's own time-out.
    const worstRunMs = worstCheckRunMs() + DELETE_MARGIN_MS;
    const canRetry = Date.now() + retryDelayMs < settleUntil && options.remainingTimeMs() - retryDelayMs > worstRunMs;
    if (failed.length === 0 || !canRetry) return results;
    logger.warn('self-check failed; retrying while the deployment settles', {
      run,
      failed: failed.map(({ name, problem }) => ({ name, problem })),
    });
    await sleep(retryDelayMs);
  }
}
