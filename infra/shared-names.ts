/**
 * Names shared by the CDK stack, the functions, the local gateway and the CLI, so they cannot drift.
 * Key schemas: renaming an attribute here replaces a production table: don't.
 */
export const INVENTORY_TABLE_KEY = { name: 'petId', type: 'N' } as const;
export const API_KEYS_TABLE_KEY = { name: 'keyHash', type: 'S' } as const;

/** Stack output keys, read by the operator CLI (`--stage`) to find a deployed stage's tables and API. */
export const STACK_OUTPUTS = {
  apiUrl: 'ApiUrl',
  inventoryTable: 'InventoryTableName',
  apiKeysTable: 'ApiKeysTableName',
  authorizerCacheTtlSeconds: 'AuthorizerCacheTtlSeconds',
  /** With {@link STACK_OUTPUTS.apiStageName}: what `keys revoke` flushes the authorizer cache of. */
  restApiId: 'RestApiId',
  apiStageName: 'ApiStageName',
} as const;

/** The deployed stages. */
export const STAGES = ['staging', 'production'] as const;
export type StageName = (typeof STAGES)[number];

/** CloudFormation stack name of a stage. */
export function stackName(stage: StageName): string {
  return `PetStoreInventory-${stage}`;
}

/**
 * CloudFormation stack name of the account stack of a region (API Gateway's account-level CloudWatch role). Stack
 * names are unique per account and region, exactly the scope of the setting it owns.
 */
export function accountStackName(region: string): string {
  return `PetStoreInventory-account-${region}`;
}
