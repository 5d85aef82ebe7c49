/**
 * Key schemas of the service's tables, shared by the CDK stack and the local DynamoDB setup so they cannot drift.
 * Renaming an attribute here replaces a production table: don't.
 */
export const INVENTORY_TABLE_KEY = { name: 'petId', type: 'N' } as const;
export const API_KEYS_TABLE_KEY = { name: 'keyHash', type: 'S' } as const;

/** Environment variables the functions read. */
export const ENV = {
  inventoryTable: 'INVENTORY_TABLE_NAME',
  apiKeysTable: 'API_KEYS_TABLE_NAME',
  petsDeprecatedAt: 'PETS_DEPRECATED_AT',
  petsSunsetAt: 'PETS_SUNSET_AT',
} as const;
