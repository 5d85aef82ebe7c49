import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { intEnv } from '../config';
import { StorageUnavailableError } from '../inventory/errors';

/**
 * Builds the DynamoDB client a function uses for its whole life. Time-outs and retries are bounded so that a
 * throttled or unreachable table becomes a 503 within a few seconds instead of a hang until the Lambda time-out:
 * worst case about maxAttempts × requestTimeout plus back-off (3 × 2 s by default).
 *
 * `AWS_ENDPOINT_URL_DYNAMODB` (read by the SDK itself) points it at DynamoDB Local.
 */
export function createDynamoClient(
  options: { maxAttempts?: number; requestTimeoutMs?: number; connectionTimeoutMs?: number; endpoint?: string } = {},
): DynamoDBClient {
  return new DynamoDBClient({
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    maxAttempts: options.maxAttempts ?? intEnv('DYNAMODB_MAX_ATTEMPTS', 3),
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? intEnv('DYNAMODB_CONNECTION_TIMEOUT_MS', 1000),
      requestTimeout: options.requestTimeoutMs ?? intEnv('DYNAMODB_REQUEST_TIMEOUT_MS', 2000),
      // Without this the SDK only logs a warning when requestTimeout passes and keeps waiting: a paused table
      // would hold the function until its own time-out.
      throwOnRequestTimeout: true,
    },
  });
}

const UNAVAILABLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether a storage error means "try again later" (throttling, time-out, network, 5xx) rather than a defect such
 * as a missing table or a malformed request, which must stay a 500 and page someone.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const meta = (error as { $metadata?: { httpStatusCode?: number } }).$metadata;
  const code = (error as { code?: string }).code;
  if (UNAVAILABLE_NAMES.has(error.name)) return true;
  if (code !== undefined && NETWORK_CODES.has(code)) return true;
  if (meta?.httpStatusCode !== undefined && meta.httpStatusCode >= 500) return true;
  return /socket hang up|ECONNREFUSED|ECONNRESET|timed? ?out/i.test(error.message);
}

/** Rethrows storage errors as StorageUnavailableError when they mean "try again later"; others unchanged. */
export function translateStorageError(error: unknown, operation: string): never {
  if (isStorageUnavailable(error))
    throw new StorageUnavailableError(`${operation} failed: storage unavailable`, { cause: error });
  throw error;
}
