import type { CancellationReason } from '@aws-sdk/client-dynamodb';
import { StorageUnavailableError } from '../inventory/errors';

const THROTTLING_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);
const UNAVAILABLE_NAMES = new Set([
  ...THROTTLING_NAMES,
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
]);
/** Node's codes for a host that could not be reached at all (refused, cut, timed out, unroutable, unresolvable). */
export const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Whether DynamoDB refused a request for throughput (a table's cap, a hot partition, the account's quota). */
export function isThrottling(error: unknown): boolean {
  return error instanceof Error && THROTTLING_NAMES.has(error.name);
}

/** Whether a storage error means "try again later" (throttling, time-out, network, 5xx) rather than a defect (500). */
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

/** The per-action reasons of a cancelled transaction, in the order of its actions; undefined for any other error. */
export function cancellationReasons(error: unknown): CancellationReason[] | undefined {
  if ((error as Error | undefined)?.name !== 'TransactionCanceledException') return undefined;
  return (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
}

/** A stored row that breaks its table's model: a data defect, refused (500) rather than filled with a default. */
export class MalformedRowError extends Error {
  override readonly name = 'MalformedRowError';
  constructor(
    /** The model the row should hold, e.g. `InventoryItem`. */
    readonly model: string,
    /** What identifies the row in a log line (never a secret). */
    readonly row: string,
    /** The first attribute found missing or of the wrong type. */
    readonly attribute: string,
  ) {
    super(`${model} row ${row} does not match the model: attribute ${attribute} is missing or of the wrong type`);
  }
}
