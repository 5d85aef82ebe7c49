import type { APIGatewayProxyResult } from 'aws-lambda';
import { RETRY_AFTER_SECONDS } from '../../service/error-codes';
import {
  AdjustmentConflictError,
  ConcurrentChangeError,
  CursorExpiredError,
  InventoryItemNotFoundError,
  QuantityConflictError,
  StorageUnavailableError,
  ValidationError,
} from '../inventory/errors';
import { HttpError } from './http-error';
import { errorResponse } from './responses';

/** Any thrown value as the Error response: domain errors keep their message, anything else is a 500 and the log's. */
export function toErrorResponse(error: unknown, requestId: string): APIGatewayProxyResult {
  if (error instanceof HttpError) return errorResponse(error.code, error.message, error.options.headers);
  if (error instanceof ValidationError) return errorResponse(error.code, error.message);
  if (error instanceof InventoryItemNotFoundError) return errorResponse('NOT_FOUND', error.message);
  if (error instanceof CursorExpiredError) return errorResponse('CURSOR_EXPIRED', error.message);
  if (error instanceof QuantityConflictError || error instanceof AdjustmentConflictError)
    return errorResponse('CONFLICT', error.message);
  if (error instanceof ConcurrentChangeError)
    return errorResponse('CONFLICT', error.message, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  // middy's early time-out (middleware.ts) can only be a wait on storage: 503, as API Gateway answers a time-out.
  if (error instanceof StorageUnavailableError || isMiddyEarlyTimeout(error)) {
    return errorResponse(
      'SERVICE_UNAVAILABLE',
      `Inventory storage is temporarily unavailable; retry after ${RETRY_AFTER_SECONDS} s. Request id: ${requestId}.`,
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    );
  }
  return errorResponse('INTERNAL', `An internal error occurred. Request id: ${requestId}.`);
}

/** The error middy's default `timeoutEarlyResponse` throws (@middy/core: name TimeoutError, cause.package). */
function isMiddyEarlyTimeout(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TimeoutError') return false;
  const cause = error.cause as { package?: unknown } | undefined;
  return cause?.package === '@middy/core';
}
