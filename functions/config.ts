import { getStringFromEnv } from '@aws-lambda-powertools/commons/utils/env';

/**
 * The one place a function reads its environment, on Powertools' env helpers (they read `process.env` at call
 * time, so a handler reads its configuration once, when it builds its dependencies).
 */

/** Environment variables the functions read; the stack sets them (infra/inventory-stack.ts). */
export const ENV = {
  inventoryTable: 'INVENTORY_TABLE_NAME',
  apiKeysTable: 'API_KEYS_TABLE_NAME',
  historyTable: 'INVENTORY_HISTORY_TABLE_NAME',
  /** Days a history row is kept (the history table's TTL). */
  historyRetentionDays: 'HISTORY_RETENTION_DAYS',
  petsDeprecatedAt: 'PETS_DEPRECATED_AT',
  petsSunsetAt: 'PETS_SUNSET_AT',
  corsAllowedOrigins: 'CORS_ALLOWED_ORIGINS',
  selfCheckBaseUrl: 'SELF_CHECK_BASE_URL',
  /** The pre-traffic hook's probe of each function, by function name (JSON). */
  preTrafficTargets: 'PRE_TRAFFIC_TARGETS',
  /** The stage name: the `stage` dimension of every custom metric. */
  stage: 'STAGE',
  /** Read units per second the list's Scan may average (half the inventory table's read cap on a stage). */
  listReadUnitsPerSecond: 'LIST_READ_UNITS_PER_SECOND',
  dynamoMaxAttempts: 'DYNAMODB_MAX_ATTEMPTS',
  dynamoConnectionTimeoutMs: 'DYNAMODB_CONNECTION_TIMEOUT_MS',
  dynamoRequestTimeoutMs: 'DYNAMODB_REQUEST_TIMEOUT_MS',
} as const;

/**
 * Reads a required environment variable.
 *
 * @throws Error "X environment variable is not set" when it is missing or empty.
 */
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

/**
 * Reads an optional non-negative integer environment variable (0 is allowed: it turns a time-out off), with a
 * default when it is unset or empty.
 *
 * @throws Error when it is set to anything but a non-negative integer.
 */
export function intEnv(name: string, fallback: number): number {
  const raw = optionalEnv(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(value))
    throw new Error(`${name} environment variable must be a non-negative integer`);
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
