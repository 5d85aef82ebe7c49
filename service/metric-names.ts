/**
 * The custom metrics the functions emit (Powertools, CloudWatch EMF) and the alarms in the stack read, named once.
 * Every metric carries the dimensions `service` and, on a deployed stage, `stage`.
 */
export const METRICS_NAMESPACE = 'PetStoreInventory';

/** Powertools service name: the `service` dimension of every metric and the `service` key of every log line. */
export const SERVICE_NAME = 'pet-store-inventory';

/** The dimension that keeps two stages in one account apart; its value is the `STAGE` variable the stack sets. */
export const STAGE_DIMENSION = 'stage';

/**
 * The dimension naming the function version that emitted a metric, added (besides `service` and `stage`) where a
 * deploy's gate must see only its new version.
 */
export const VERSION_DIMENSION = 'version';

/** The share of its timeout a list may run before it counts as near its time-out (InventoryListNearTimeout). */
export const LIST_NEAR_TIMEOUT_SHARE = 0.8;

export const METRIC_NAMES = {
  /** A route answered 500: a fault in our code or configuration. */
  internalError: 'InternalError',
  /** A route answered 503 because DynamoDB failed or throttled. */
  storageUnavailable: 'StorageUnavailable',
  /** Entries changed: one per PATCH, one per change of a batch. */
  inventoryUpdated: 'InventoryUpdated',
  /** The deprecated GET /pets/{petId} was called (who still depends on it before its sunset). */
  deprecatedRouteCalled: 'DeprecatedRouteCalled',
  /** An operation the service does not implement (GET /store/orders) was called. */
  unimplementedRouteCalled: 'UnimplementedRouteCalled',
  /** A route refused the request with a 4xx. */
  clientError: 'ClientError',
  /** The authorizer accepted a key. */
  apiKeyAccepted: 'ApiKeyAccepted',
  /** The authorizer refused a key (unknown, malformed or revoked): a client mistake or probing, not a fault. */
  apiKeyRefused: 'ApiKeyRefused',
  /**
   * The authorizer could not decide (the keys table failed): clients get 503. Counted twice: with the stage's
   * dimensions, and in a record of its own with the executing version's ({@link VERSION_DIMENSION}).
   */
  authorizerUnavailable: 'AuthorizerUnavailable',
  /** GET /inventory/{petId} answered an entry (200). */
  inventoryEntryRead: 'InventoryEntryRead',
  /** Changes in one GET /inventory/{petId}/history answer (200). */
  inventoryHistoryListed: 'InventoryHistoryListed',
  /** A PATCH with a known Idempotency-Key got its stored first answer back, and nothing was applied. */
  idempotentReplayed: 'IdempotentReplayed',
  /**
   * A whole list (GET /inventory without `limit`) began to stream: counted with the status, when the invocation's
   * own metrics are flushed, so that flush is never empty; its size follows at its end (InventoryEntriesListed).
   */
  inventoryListStreamStarted: 'InventoryListStreamStarted',
  /**
   * A list has run {@link LIST_NEAR_TIMEOUT_SHARE} of its timeout and still runs: sent at that moment, as Lambda's
   * own metrics of an invocation come only at its end.
   */
  inventoryListNearTimeout: 'InventoryListNearTimeout',
  /** Entries in one GET /inventory answer (Maximum shows how close the list is to its response limit). */
  inventoryEntriesListed: 'InventoryEntriesListed',
  /** A streamed answer failed after its first byte: the client got a cut-off body (logged with the request id). */
  responseStreamAborted: 'ResponseStreamAborted',
  /** Stock changes the history function wrote to the history table. */
  historyEntriesRecorded: 'HistoryEntriesRecorded',
  /** Stream records the history function could not record (retried, then sent to the on-failure queue). */
  historyRecordsFailed: 'HistoryRecordsFailed',
  /** Change events the publisher put on the stage's event bus. */
  changesPublished: 'ChangesPublished',
  /** History stream records the publisher could not put on the bus (retried, then sent to its on-failure queue). */
  changesNotPublished: 'ChangesNotPublished',
  /** Webhooks a subscriber acknowledged with a 2xx. */
  webhooksDelivered: 'WebhooksDelivered',
  /** Webhook attempts a subscriber did not acknowledge in time (retried with backoff, then dead-lettered). */
  webhookAttemptsFailed: 'WebhookAttemptsFailed',
} as const;
