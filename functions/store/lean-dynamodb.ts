import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { intEnv } from '../config';
import type { DynamoOperations } from './dynamo-operations';
import { type AwsCredentials, signRequest } from './sigv4';

/**
 * A minimal DynamoDB client for the Lambda functions: the JSON 1.0 protocol over `node:https` with keep-alive,
 * SigV4 signing with `node:crypto` (`sigv4.ts`), bounded retries and time-outs. It replaces the AWS SDK in the
 * function bundles (~200 KB and two thirds of module init) for the few operations they make.
 *
 * Inputs and outputs are the SDK's low-level shapes (`AttributeValue` maps), sent and read as the service's JSON
 * as they are. Limitation: binary attributes (`B`, `BS`) are sent base64-encoded but come back as base64 strings,
 * not `Uint8Array`s; the service stores none.
 *
 * Errors behave like the SDK's for `isStorageUnavailable` (`storage-errors.ts`): a service error is a
 * {@link DynamoDBServiceError} named by its short type (`ConditionalCheckFailedException`, ...) with
 * `$metadata.httpStatusCode`; a time-out is named `TimeoutError`; a network error keeps Node's `code`
 * (`ECONNREFUSED`, ...).
 */
export interface LeanDynamoClient extends DynamoOperations {
  /** Where requests go, e.g. `https://dynamodb.eu-west-1.amazonaws.com/`. */
  readonly endpoint: string;
  readonly region: string;
  /** Closes kept-alive connections (tests and scripts; a function never needs to). */
  destroy(): void;
}

/** Options of {@link createLeanDynamoClient}; every one has a default suited to a Lambda function. */
export interface LeanDynamoClientOptions {
  /**
   * Base URL, e.g. DynamoDB Local's. Default: AWS_ENDPOINT_URL_DYNAMODB, else AWS_ENDPOINT_URL, else the regional
   * endpoint `https://dynamodb.<region>.amazonaws.com`.
   */
  endpoint?: string;
  /** Signing region. Default: AWS_REGION, else AWS_DEFAULT_REGION; with a custom endpoint and neither, us-east-1. */
  region?: string;
  /**
   * Credentials, or a function returning them (called before every request). Default: AWS_ACCESS_KEY_ID,
   * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, read at each request, as Lambda provides them.
   */
  credentials?: AwsCredentials | (() => AwsCredentials | Promise<AwsCredentials>);
  /** Attempts per operation, the first included. Default: DYNAMODB_MAX_ATTEMPTS, else 3. */
  maxAttempts?: number;
  /** Time to establish a connection. Default: DYNAMODB_CONNECTION_TIMEOUT_MS, else 1000. */
  connectionTimeoutMs?: number;
  /** Time for a whole attempt, connection included. Default: DYNAMODB_REQUEST_TIMEOUT_MS, else 2000. */
  requestTimeoutMs?: number;
  /** Environment to read the defaults from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Source of retry jitter in [0, 1). Default: `Math.random`. */
  random?: () => number;
}

/** An error answered by DynamoDB: `name` is the short error type, as the SDK names its exceptions. */
export class DynamoDBServiceError extends Error {
  readonly $fault: 'client' | 'server';
  readonly $metadata: { httpStatusCode: number; requestId?: string; attempts?: number; totalRetryDelay?: number };

  constructor(name: string, message: string, httpStatusCode: number, requestId?: string) {
    super(message);
    this.name = name;
    this.$fault = httpStatusCode >= 500 ? 'server' : 'client';
    this.$metadata = { httpStatusCode, ...(requestId ? { requestId } : {}) };
  }
}

/** Throttling error types the SDK retries with the longer back-off (its THROTTLING_ERROR_CODES that DynamoDB uses). */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'Throttling',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'LimitExceededException',
  'TransactionInProgressException',
]);
const TRANSIENT = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TRANSIENT_STATUS = new Set([500, 502, 503, 504]);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** The SDK's standard retry strategy: full jitter over base × 2^attempt, capped at 20 s. */
const DEFAULT_DELAY_BASE_MS = 100;
const THROTTLING_DELAY_BASE_MS = 500;
const MAX_DELAY_MS = 20_000;

/** Whether an error is worth another attempt: throttling, time-out, network failure or 5xx, as the SDK decides. */
export function isRetryableDynamoError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (THROTTLING.has(error.name) || TRANSIENT.has(error.name)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === 429 || (status !== undefined && TRANSIENT_STATUS.has(status));
}

/** Builds a lean DynamoDB client; see {@link LeanDynamoClient}. Cheap: no connection is made before the first call. */
export function createLeanDynamoClient(options: LeanDynamoClientOptions = {}): LeanDynamoClient {
  const env = options.env ?? process.env;
  const configured = options.endpoint || env.AWS_ENDPOINT_URL_DYNAMODB || env.AWS_ENDPOINT_URL || undefined;
  const region = options.region || env.AWS_REGION || env.AWS_DEFAULT_REGION || (configured ? 'us-east-1' : '');
  if (!region) throw new Error('No AWS region: set AWS_REGION (Lambda sets it) or pass region');
  const url = new URL(
    configured ?? `https://dynamodb.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`,
  );
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`Unsupported endpoint ${url.href}`);
  if (url.pathname !== '/' || url.search) throw new Error(`The endpoint must have no path or query: ${url.href}`);
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : secure ? 443 : 80;

  const maxAttempts = Math.max(1, options.maxAttempts ?? intEnv('DYNAMODB_MAX_ATTEMPTS', 3));
  const connectionTimeoutMs = options.connectionTimeoutMs ?? intEnv('DYNAMODB_CONNECTION_TIMEOUT_MS', 1000);
  const requestTimeoutMs = options.requestTimeoutMs ?? intEnv('DYNAMODB_REQUEST_TIMEOUT_MS', 2000);
  const random = options.random ?? Math.random;
  const credentials = options.credentials ?? (() => credentialsFromEnv(env));
  const agent = secure
    ? new HttpsAgent({ keepAlive: true, maxSockets: 50 })
    : new HttpAgent({ keepAlive: true, maxSockets: 50 });

  async function attempt(operation: string, body: string): Promise<HttpAnswer> {
    const resolved = typeof credentials === 'function' ? await credentials() : credentials;
    const headers = signRequest(
      {
        host: url.host,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'content-length': String(Buffer.byteLength(body)),
          'x-amz-target': `DynamoDB_20120810.${operation}`,
        },
        body,
      },
      { region, service: 'dynamodb', credentials: resolved, date: new Date() },
    );
    return post({ secure, hostname, port, agent, headers, body, connectionTimeoutMs, requestTimeoutMs });
  }

  async function send<O>(operation: string, input: object): Promise<O> {
    const body = JSON.stringify(input, binaryAsBase64);
    let totalRetryDelay = 0;
    for (let attempts = 1; ; attempts++) {
      try {
        const answer = await attempt(operation, body);
        const requestId = header(answer.headers, 'x-amzn-requestid');
        if (answer.status < 200 || answer.status > 299) throw serviceError(answer, requestId);
        const output = (answer.body ? JSON.parse(answer.body) : {}) as Record<string, unknown>;
        output.$metadata = { httpStatusCode: answer.status, requestId, attempts, totalRetryDelay };
        return output as O;
      } catch (error) {
        if (error instanceof Error) {
          const meta = (error as { $metadata?: Record<string, unknown> }).$metadata;
          if (meta) Object.assign(meta, { attempts, totalRetryDelay });
        }
        if (attempts >= maxAttempts || !isRetryableDynamoError(error)) throw error;
        const base = THROTTLING.has((error as Error).name) ? THROTTLING_DELAY_BASE_MS : DEFAULT_DELAY_BASE_MS;
        const delay = Math.floor(Math.min(MAX_DELAY_MS, random() * base * 2 ** attempts));
        totalRetryDelay += delay;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  return {
    endpoint: url.href,
    region,
    deleteItem: (input) => send('DeleteItem', input),
    getItem: (input) => send('GetItem', input),
    putItem: (input) => send('PutItem', input),
    scan: (input) => send('Scan', input),
    updateItem: (input) => send('UpdateItem', input),
    destroy: () => agent.destroy(),
  };
}

/** Credentials as Lambda provides them. */
function credentialsFromEnv(env: NodeJS.ProcessEnv): AwsCredentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey)
    throw new Error('No AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set');
  const sessionToken = env.AWS_SESSION_TOKEN || undefined;
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/** JSON.stringify replacer: Blob members (`B`, `BS`) travel as base64 in the JSON protocol. */
function binaryAsBase64(_key: string, value: unknown): unknown {
  return value instanceof Uint8Array
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')
    : value;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The error of a non-2xx answer. The type comes from the body's `__type`
 * (`com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException`) or the `x-amzn-errortype` header, without
 * its namespace or suffix; the message from `message` or `Message`.
 */
function serviceError(answer: HttpAnswer, requestId: string | undefined): DynamoDBServiceError {
  let parsed: { __type?: unknown; message?: unknown; Message?: unknown } = {};
  try {
    parsed = answer.body ? JSON.parse(answer.body) : {};
  } catch {
    // Not JSON (a proxy or load balancer answered): named by status below.
  }
  const rawType = typeof parsed.__type === 'string' ? parsed.__type : header(answer.headers, 'x-amzn-errortype');
  const type = rawType?.split('#').pop()?.split(':')[0]?.trim();
  const name = type || (answer.status >= 500 ? 'InternalServerError' : 'UnknownError');
  const message =
    typeof parsed.message === 'string'
      ? parsed.message
      : typeof parsed.Message === 'string'
        ? parsed.Message
        : `DynamoDB answered HTTP ${answer.status}`;
  return new DynamoDBServiceError(name, message, answer.status, requestId);
}

interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A network error (`ECONNREFUSED`, `ECONNRESET`, ...) as an Error of this module's realm, with Node's `code` and
 * the original as `cause` (`instanceof Error` holds wherever the client runs, a test VM included).
 */
function networkError(error: Error & { code?: string }): Error {
  return Object.assign(new Error(error.message, { cause: error }), {
    name: error.name,
    ...(error.code ? { code: error.code } : {}),
  });
}

function timeoutError(message: string): Error {
  return Object.assign(new Error(message), { name: 'TimeoutError', code: 'ETIMEDOUT' });
}

/**
 * One POST. Fails with a `TimeoutError` when no connection is made within `connectionTimeoutMs` or the whole
 * exchange takes longer than `requestTimeoutMs` (a paused server), as the SDK's `throwOnRequestTimeout` does.
 */
function post(request: {
  secure: boolean;
  hostname: string;
  port: number;
  agent: HttpAgent;
  headers: Record<string, string>;
  body: string;
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    let connectTimer: NodeJS.Timeout | undefined;
    let requestTimer: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(requestTimer);
      return true;
    };
    const fail = (error: Error): void => {
      if (!settle()) return;
      req.destroy();
      reject(error);
    };
    const req = (request.secure ? httpsRequest : httpRequest)({
      hostname: request.hostname,
      port: request.port,
      path: '/',
      method: 'POST',
      headers: request.headers,
      agent: request.agent,
    });
    if (request.requestTimeoutMs > 0)
      requestTimer = setTimeout(
        () => fail(timeoutError(`DynamoDB did not answer within the ${request.requestTimeoutMs} ms request time-out`)),
        request.requestTimeoutMs,
      );
    req.once('socket', (socket) => {
      if (!socket.connecting || request.connectionTimeoutMs <= 0) return;
      connectTimer = setTimeout(
        () =>
          fail(
            timeoutError(`No connection to DynamoDB within the ${request.connectionTimeoutMs} ms connection time-out`),
          ),
        request.connectionTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(connectTimer));
    });
    req.once('error', (error) => fail(networkError(error)));
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', (error) => fail(networkError(error)));
      res.once('end', () => {
        if (!settle()) return;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.end(request.body);
  });
}
