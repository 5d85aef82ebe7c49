import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { intEnv } from '../config';

/**
 * Builds an AWS SDK DynamoDB client with the functions' bounds, for the operator CLI and tests (the SDK stays
 * outside the Lambda bundles). The Lambda
 * functions themselves use the lean client (`lean-dynamodb.ts`), which reads the same DYNAMODB_* variables with the
 * same defaults. Time-outs and retries are bounded so that a throttled or unreachable table becomes a 503 within a
 * few seconds instead of a hang until the Lambda time-out: worst case about maxAttempts × requestTimeout plus
 * back-off (3 × 2 s by default).
 *
 * `AWS_ENDPOINT_URL_DYNAMODB` (read by the SDK itself) points it at DynamoDB Local.
 */
export function createDynamoClient(
  options: {
    maxAttempts?: number;
    requestTimeoutMs?: number;
    connectionTimeoutMs?: number;
    endpoint?: string;
    region?: string;
    credentials?: { accessKeyId: string; secretAccessKey: string };
  } = {},
): DynamoDBClient {
  return new DynamoDBClient({
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.region ? { region: options.region } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
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
