import { getStringFromEnv } from '@aws-lambda-powertools/commons/utils/env';

/** Environment variables the functions read; the stack sets them (infra/inventory-stack.ts). */
export const ENV = {
  inventoryTable: 'INVENTORY_TABLE_NAME',
  apiKeysTable: 'API_KEYS_TABLE_NAME',
  historyTable: 'INVENTORY_HISTORY_TABLE_NAME',
  /** The idempotency records of PATCH (Idempotency-Key). */
  idempotencyTable: 'IDEMPOTENCY_TABLE_NAME',
  /** Days a history row is kept (the history table's TTL). */
  historyRetentionDays: 'HISTORY_RETENTION_DAYS',
  petsDeprecatedAt: 'PETS_DEPRECATED_AT',
  petsSunsetAt: 'PETS_SUNSET_AT',
  corsAllowedOrigins: 'CORS_ALLOWED_ORIGINS',
  selfCheckBaseUrl: 'SELF_CHECK_BASE_URL',
  /** The stage's own CloudFormation stack (its ID), whose status tells the deploy checks a rollback from a deploy. */
  stackId: 'STACK_ID',
  /** The pre-traffic hook's probe of each function, by function name (JSON). */
  preTrafficTargets: 'PRE_TRAFFIC_TARGETS',
  /** The stage name: the `stage` dimension of every custom metric. */
  stage: 'STAGE',
  /** Read units per second one list's reads may average (half the list index's read cap on a stage). */
  listReadUnitsPerSecond: 'LIST_READ_UNITS_PER_SECOND',
  /** The stage's event bus, where the publisher puts each change event. */
  changeEventBus: 'CHANGE_EVENT_BUS_NAME',
  /** A deliver function's subscriber: its URL, its signing secret's ARN (Secrets Manager), its queue. */
  webhookUrl: 'WEBHOOK_URL',
  webhookSecretArn: 'WEBHOOK_SECRET_ARN',
  webhookQueueUrl: 'WEBHOOK_QUEUE_URL',
  dynamoMaxAttempts: 'DYNAMODB_MAX_ATTEMPTS',
  dynamoConnectionTimeoutMs: 'DYNAMODB_CONNECTION_TIMEOUT_MS',
  dynamoRequestTimeoutMs: 'DYNAMODB_REQUEST_TIMEOUT_MS',
} as const;

/** Reads a required environment variable; throws when it is missing or empty. */
export function requireEnv(name: string): string {
  const value = getStringFromEnv({ key: name, defaultValue: '' });
  if (value.length === 0) throw new Error(`${name} environment variable is not set`);
  return value;
}

/** Reads an optional environment variable; empty counts as unset. */
export function optionalEnv(name: string): string | undefined {
  const value = getStringFromEnv({ key: name, defaultValue: '' });
  return value.length > 0 ? value : undefined;
}

/** What a numeric environment variable may hold. */
export interface NumberRule {
  /** Whole numbers only. @default true */
  integer?: boolean;
  /** @default 0 */
  min?: number;
  /** @default none */
  max?: number;
}

/** A TCP port to listen on or connect to: 0 (any free port) is refused, since a caller must know where to connect. */
export const PORT_NUMBER: NumberRule = { min: 1, max: 65_535 };

/** Reads an optional numeric environment variable (every runtime's one parser); unset or blank gives `fallback`. */
export function numberEnv(
  name: string,
  fallback: number,
  rule: NumberRule = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const { integer = true, min = 0, max = Number.POSITIVE_INFINITY } = rule;
  const value = Number(raw);
  const allowed =
    (integer ? /^[0-9]+$/.test(raw) && Number.isSafeInteger(value) : /^[0-9]+(\.[0-9]+)?$/.test(raw)) &&
    value >= min &&
    value <= max;
  if (!allowed) {
    const kind = integer ? 'a whole number' : 'a number';
    const range = max === Number.POSITIVE_INFINITY ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new Error(`${name} must be ${kind} ${range}; got "${raw}"`);
  }
  return value;
}

/** Builds a value on first use and returns the same one after: module-scope dependencies that tests can bypass. */
export function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}

/** A handler's dependencies, or a function that builds them on the first invocation (a {@link once}). */
export type Deps<T> = T | (() => T);

/** The function that returns a handler's dependencies, whichever way they were given. */
export function resolveDeps<T extends object>(deps: Deps<T>): () => T {
  return typeof deps === 'function' ? deps : () => deps;
}
