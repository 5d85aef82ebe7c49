import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { intEnv } from '../config';

/**
 * Builds an AWS SDK DynamoDB client with the functions' bounds, for tools and tests that want the SDK. The Lambda
 * functions themselves use the lean client (`lean-dynamodb.ts`), which reads the same DYNAMODB_* variables with the
 * same defaults. Time-outs and retries are bounded so that a throttled or unreachable table becomes a 503 within a
 * few seconds instead of a hang until the Lambda time-out: worst case about maxAttempts × requestTimeout plus
 * back-off (3 × 2 s by default).
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

// Classification lives in storage-errors.ts (no SDK import, so the Lambda bundles can use it); re-exported for
// the CLI and tests that import it from here.
export { isStorageUnavailable, translateStorageError } from './storage-errors';
