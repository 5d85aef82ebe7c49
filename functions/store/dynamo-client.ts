import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ENV, numberEnv } from '../config';

/** Where an adapter of one table works. */
export interface TableOptions {
  client: DynamoDBClient;
  tableName: string;
}

/** Bounds of a DynamoDB client; each defaults to its `DYNAMODB_*` environment variable, then to the value shown. */
export interface DynamoClientOptions {
  /** Attempts per call, the first included (`DYNAMODB_MAX_ATTEMPTS`). @default 3 */
  maxAttempts?: number;
  /** Milliseconds to open a connection (`DYNAMODB_CONNECTION_TIMEOUT_MS`); 0 waits forever. @default 1000 */
  connectionTimeoutMs?: number;
  /** Milliseconds per attempt (`DYNAMODB_REQUEST_TIMEOUT_MS`); 0 waits forever. @default 2000 */
  requestTimeoutMs?: number;
  /** `adaptive` slows every call through the client after throttling. @default 'standard' */
  retryMode?: 'standard' | 'adaptive';
  /** @default the SDK's resolution (`AWS_ENDPOINT_URL_DYNAMODB`, then the region's endpoint) */
  endpoint?: string;
  /** @default the SDK's resolution (`AWS_REGION`) */
  region?: string;
  /** @default the SDK's default chain (in a Lambda bundle: the environment only, see infra/bundling.ts) */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** The DynamoDB client every caller uses, with bounded retries and time-outs: an unreachable table is a quick 503. */
export function createDynamoClient(options: DynamoClientOptions = {}): DynamoDBClient {
  const agent = { keepAlive: true, maxSockets: 50 };
  const client = new DynamoDBClient({
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.region ? { region: options.region } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    maxAttempts: Math.max(1, options.maxAttempts ?? numberEnv(ENV.dynamoMaxAttempts, 3)),
    retryMode: options.retryMode ?? 'standard',
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? numberEnv(ENV.dynamoConnectionTimeoutMs, 1000),
      requestTimeout: options.requestTimeoutMs ?? numberEnv(ENV.dynamoRequestTimeoutMs, 2000),
      // Without this the SDK only logs a warning when requestTimeout passes and keeps waiting: a paused table
      // would hold the function until its own time-out.
      throwOnRequestTimeout: true,
      httpAgent: agent,
      httpsAgent: agent,
    },
  });
  // The SDK's logger middleware copies every output, sensitive fields masked, for the client's logger even when that
  // is the default no-op: a list page of 1,000 entries costs ~2 ms of CPU to build a copy nobody reads.
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}
