import { MAX_QUANTITY } from './types';

// Domain errors, with no HTTP knowledge: functions/http/error-mapping.ts maps them to the Error body.

/** A request value breaks one of the documented rules; `message` names the field and the rule. */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  constructor(
    message: string,
    readonly code: 'VALIDATION_FAILED' | 'MALFORMED_JSON' = 'VALIDATION_FAILED',
  ) {
    super(message);
  }
}

/** A feed cursor points at events older than the history keeps: some after it may be gone. */
export class CursorExpiredError extends Error {
  override readonly name = 'CursorExpiredError';
  constructor(retentionDays: number) {
    super(
      `cursor is older than the ${retentionDays} days the feed keeps events, so some after it may be gone: list ` +
        'GET /inventory again and follow the feed from its Link rel="changes".',
    );
  }
}

/** No inventory entry exists for the pet. */
export class InventoryItemNotFoundError extends Error {
  override readonly name = 'InventoryItemNotFoundError';
  constructor(readonly petId: string) {
    super(`No inventory entry exists for petId ${petId}.`);
  }
}

/** A compare-and-set update found another quantity stored than the one expected; nothing was changed. */
export class QuantityConflictError extends Error {
  override readonly name = 'QuantityConflictError';
  constructor(
    readonly petId: string,
    readonly expectedQuantity: number,
    readonly currentQuantity: number,
  ) {
    super(
      `The stored quantity of petId ${petId} is ${currentQuantity}, not the expected ${expectedQuantity}; nothing was changed.`,
    );
  }
}

/** An adjustment would take the stock below 0 or above the largest quantity; nothing was changed. */
export class AdjustmentConflictError extends Error {
  override readonly name = 'AdjustmentConflictError';
  constructor(
    readonly petId: string,
    readonly adjustBy: number,
    readonly currentQuantity: number,
  ) {
    const limit = adjustBy < 0 ? 'below 0' : `above ${MAX_QUANTITY}`;
    super(
      `The stored quantity of petId ${petId} is ${currentQuantity}; adjusting it by ${adjustBy} would take it ${limit}, so nothing was changed.`,
    );
  }
}

/** Storage was throttled, timed out or could not be reached: the client may retry. */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
}

/**
 * Another request changed one of a batch's entries at the moment its transaction ran, so DynamoDB cancelled it;
 * nothing was applied and the same request may be resent at once.
 */
export class ConcurrentChangeError extends Error {
  override readonly name = 'ConcurrentChangeError';
  constructor(readonly petId: string) {
    super(
      `Another request changed the entry of petId ${petId} at the same moment, so nothing was changed; resend the request.`,
    );
  }
}

/**
 * The error of a batch's change, its message starting with the change's position and, once known, its petId
 * (`changes[3] (petId 9): …`): the answer names the change that failed. Returns the same error.
 */
export function atChange<E extends Error>(error: E, index: number, petId?: string): E {
  error.message = `changes[${index}]${petId === undefined ? '' : ` (petId ${petId})`}: ${error.message}`;
  return error;
}
