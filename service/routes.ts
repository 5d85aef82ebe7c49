/** Which DynamoDB access a route's function is granted (least privilege). */
export type TableAccess =
  | 'inventory:read'
  | 'inventory:get'
  | 'inventory:write'
  | 'idempotency:write'
  | 'history:read'
  | 'history:feed'
  | 'history:position';

export interface Route {
  /** The OpenAPI operationId; also names the function in the stack. */
  operationId: string;
  method: 'GET' | 'PATCH' | 'POST';
  /** Path relative to the `/v1` base, with `{param}` segments as API Gateway writes them. */
  path: string;
  /** The module under `functions/handlers/` that exports `handler`. */
  handler: string;
  /** Table access the function needs; none for the 501 routes. */
  access: readonly TableAccess[];
  /** Whether the operation is deprecated (sends Deprecation/Sunset headers). */
  deprecated?: boolean;
  /** Answers 501 NOT_IMPLEMENTED by design (the spec defines no behaviour): not a fault, so no alarm counts it. */
  notImplemented?: boolean;
  /** The handler streams its response (Lambda response streaming), and so do the stage and the local gateway. */
  streaming?: boolean;
  /** The function's timeout. @default {@link DEFAULT_FUNCTION_TIMEOUT_SECONDS} */
  timeoutSeconds?: number;
}

/** Timeout of every function without its own: the SDK's bounded retries give up well within it. */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 10;

/**
 * Timeout of `GET /inventory`, which streams the whole inventory as it reads it: 14 minutes, under API Gateway's
 * 15-minute streaming maximum with room for the integration's own time-out past it (docs/performance.md, "Timeout").
 */
export const LIST_INVENTORY_TIMEOUT_SECONDS = 840;

/**
 * The API's operations: the stack builds its resources, methods and functions from them, and the local gateway
 * routes by them, so the two cannot drift.
 */
export const ROUTES: readonly Route[] = [
  {
    operationId: 'listInventory',
    method: 'GET',
    path: '/inventory',
    handler: 'list-inventory',
    // The entries, and the feed's position when the list began (its Link rel="changes").
    access: ['inventory:read', 'history:position'],
    streaming: true,
    // The largest inventory at its read pace and the stream's bandwidth, with room (docs/performance.md, "Timeout").
    timeoutSeconds: LIST_INVENTORY_TIMEOUT_SECONDS,
  },
  {
    operationId: 'getInventoryEntry',
    method: 'GET',
    path: '/inventory/{petId}',
    handler: 'get-inventory-entry',
    access: ['inventory:get'],
  },
  {
    operationId: 'updateInventory',
    method: 'PATCH',
    path: '/inventory/{petId}',
    handler: 'update-inventory',
    access: ['inventory:write', 'idempotency:write'],
  },
  {
    operationId: 'listInventoryChanges',
    method: 'GET',
    path: '/inventory/changes',
    handler: 'list-inventory-changes',
    access: ['history:feed'],
  },
  {
    operationId: 'applyInventoryChanges',
    method: 'POST',
    path: '/inventory/changes',
    handler: 'apply-inventory-changes',
    // TransactWriteItems' updates are governed by UpdateItem and TransactGetItems' reads by GetItem ("Using IAM with
    // DynamoDB transactions", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
    access: ['inventory:write', 'inventory:get', 'idempotency:write'],
  },
  {
    operationId: 'listInventoryHistory',
    method: 'GET',
    path: '/inventory/{petId}/history',
    handler: 'list-inventory-history',
    // The entry, for a 404 when there is none; the pet's history rows.
    access: ['inventory:get', 'history:read'],
  },
  {
    operationId: 'getPetById',
    method: 'GET',
    path: '/pets/{petId}',
    handler: 'get-pet',
    access: [],
    deprecated: true,
    notImplemented: true,
  },
  {
    operationId: 'listStoreOrders',
    method: 'GET',
    path: '/store/orders',
    handler: 'list-store-orders',
    access: [],
    notImplemented: true,
  },
];

/** When `GET /pets/{petId}` was deprecated (its `Deprecation` header); the stack passes it to the function. */
export const PETS_DEPRECATED_AT = '2026-11-22';

/** The authorizer's module under `functions/handlers/`. */
export const AUTHORIZER_HANDLER = 'authorizer';

/**
 * The authorizer function's timeout: the stack sets it, the local gateway stops the authorizer at it, and
 * `keys revoke --stage` waits it out before its second cache flush (no authorizer call outlives it).
 */
export const AUTHORIZER_TIMEOUT_SECONDS = DEFAULT_FUNCTION_TIMEOUT_SECONDS;

/** The API Gateway stage name: each stage's base URL ends with it, as the spec requires. */
export const API_STAGE_NAME = 'v1';

/** Methods each path answers, for 405 `Allow` headers. */
export function allowedMethods(path: string): string[] {
  return ROUTES.filter((route) => route.path === path).map((route) => route.method);
}
