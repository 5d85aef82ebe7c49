/**
 * Names shared by the CDK stack, the functions, the local gateway and the CLI, so they cannot drift.
 * Key schemas: renaming an attribute here replaces a production table: don't.
 */
export const INVENTORY_TABLE_KEY = { name: 'petId', type: 'N' } as const;
export const API_KEYS_TABLE_KEY = { name: 'keyHash', type: 'S' } as const;

/** Environment variables the functions read. */
export const ENV = {
  inventoryTable: 'INVENTORY_TABLE_NAME',
  apiKeysTable: 'API_KEYS_TABLE_NAME',
  petsDeprecatedAt: 'PETS_DEPRECATED_AT',
  petsSunsetAt: 'PETS_SUNSET_AT',
  corsAllowedOrigins: 'CORS_ALLOWED_ORIGINS',
  selfCheckBaseUrl: 'SELF_CHECK_BASE_URL',
} as const;

/** Stack output keys, read by the operator CLI (`--stage`) to find a deployed stage's tables. */
export const STACK_OUTPUTS = {
  apiUrl: 'ApiUrl',
  inventoryTable: 'InventoryTableName',
  apiKeysTable: 'ApiKeysTableName',
  authorizerCacheTtlSeconds: 'AuthorizerCacheTtlSeconds',
} as const;

/** CloudFormation stack name of a stage. */
export function stackName(stage: 'staging' | 'production'): string {
  return `PetStoreInventory-${stage}`;
}
