/** How `npm start`, the tests and the CLI's local target reach DynamoDB Local, without importing local/. */

export interface TableNames {
  inventory: string;
  apiKeys: string;
  /** The inventory history (fed by the inventory table's stream). */
  history: string;
  /** The idempotency records of PATCH (Idempotency-Key); the CLI never reads them, so its targets may leave it out. */
  idempotency?: string;
}

/** The variable that names DynamoDB Local's port, for `npm start` and the CLI's local target, and its default. */
export const LOCAL_DYNAMODB_PORT = { variable: 'DYNAMODB_PORT', fallback: 8000 } as const;

/** Table names of the local gateway (the deployed stack lets CloudFormation name them). */
export const LOCAL_TABLE_NAMES: TableNames = {
  inventory: 'petstore-inventory',
  apiKeys: 'petstore-api-keys',
  history: 'petstore-inventory-history',
  idempotency: 'petstore-idempotency',
};

/** Fake credentials DynamoDB Local accepts (letters and digits only); a developer's real ones are kept. */
export function useLocalCredentials(env: NodeJS.ProcessEnv = process.env): void {
  env.AWS_ACCESS_KEY_ID ??= 'local';
  env.AWS_SECRET_ACCESS_KEY ??= 'local';
  env.AWS_REGION ??= 'us-east-1';
}
