/**
 * Names shared by the CDK stack, the functions, the local gateway and the CLI, so they cannot drift.
 * Key schemas: renaming an attribute here replaces a production table: don't.
 */
export const INVENTORY_TABLE_KEY = { name: 'petId', type: 'N' } as const;
export const API_KEYS_TABLE_KEY = { name: 'keyHash', type: 'S' } as const;
/**
 * The inventory history: one pet's changes under its petId, sorted by the change's stream sequence number (see
 * functions/store/history-table.ts); rows expire through TTL on `expiresAt` (epoch seconds).
 */
export const HISTORY_TABLE_KEY = {
  partition: { name: 'petId', type: 'N' },
  sort: { name: 'sequence', type: 'S' },
  timeToLive: 'expiresAt',
} as const;
/**
 * The change feed (`GET /inventory/changes`): every history row under one `feed` partition, sorted by the
 * `feedSequence` the history function gives it (one more than the last, in one transaction with the counter row).
 */
export const HISTORY_FEED_INDEX = {
  name: 'byFeedSequence',
  partition: { name: 'feed', type: 'N' },
  sort: { name: 'feedSequence', type: 'N' },
} as const;
/** The feed's one partition value. */
export const FEED_PARTITION = '0';
/**
 * The history table's counter row: the last feed sequence number given and its time. Its petId is 2^63, one past the
 * largest int64, so no pet's history holds it.
 */
export const FEED_COUNTER_KEY = { petId: '9223372036854775808', sequence: 'feed-counter' } as const;
/**
 * The idempotency records of `PATCH /inventory/{petId}` (Powertools Idempotency's DynamoDB layout: key `id`, TTL on
 * `expiration`, epoch seconds).
 */
export const IDEMPOTENCY_TABLE_KEY = { name: 'id', type: 'S', timeToLive: 'expiration' } as const;
/** What the inventory table's stream carries: the history compares the entry before and after each write. */
export const INVENTORY_STREAM_VIEW = 'NEW_AND_OLD_IMAGES';
/** What the history table's stream carries: each new row, which the webhooks publisher turns into a change event. */
export const HISTORY_STREAM_VIEW = 'NEW_IMAGE';

/**
 * How the history function reads the inventory table's stream, deployed and in `npm start`. Bisection isolates a
 * poison record; a batch given up on goes to the on-failure queue within the stream's 24 hours (docs/deploying.md).
 */
export const HISTORY_STREAM_MAPPING = {
  batchSize: 100,
  retryAttempts: 10,
  bisectBatchOnError: true,
  maxRecordAgeSeconds: 6 * 60 * 60,
} as const;

/** Stack output keys, read by the operator CLI (`--stage`) to find a deployed stage's tables and API. */
export const STACK_OUTPUTS = {
  apiUrl: 'ApiUrl',
  inventoryTable: 'InventoryTableName',
  apiKeysTable: 'ApiKeysTableName',
  historyTable: 'InventoryHistoryTableName',
  authorizerCacheTtlSeconds: 'AuthorizerCacheTtlSeconds',
  restApiId: 'RestApiId',
  apiStageName: 'ApiStageName',
  customDomainTarget: 'CustomDomainTarget',
  changeEventBus: 'ChangeEventBusName',
} as const;

export const STAGES = ['staging', 'production'] as const;
export type StageName = (typeof STAGES)[number];

export function stackName(stage: StageName): string {
  return `PetStoreInventory-${stage}`;
}

/** CloudFormation stack name of a region's account stack (API Gateway's account-level CloudWatch role). */
export function accountStackName(region: string): string {
  return `PetStoreInventory-account-${region}`;
}

/**
 * The index the list reads (functions/store/inventory-table.ts): every entry under one `listShard` partition, sorted
 * by petId, with only what the list answers projected. Renaming it needs every row rewritten: don't.
 */
export const INVENTORY_LIST_INDEX = {
  name: 'byListShard',
  partition: { name: 'listShard', type: 'N' },
  sort: { name: 'petId', type: 'N' },
  projected: ['quantity', 'status', 'version'],
} as const;
