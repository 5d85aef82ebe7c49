import { ERROR_CODES, type ErrorCode, RETRY_AFTER_SECONDS } from '../functions/http/error-codes';

/**
 * API Gateway's own answers (the ones no handler produces), in the spec's Error body. The stack installs each as a
 * gateway response; the local gateway answers the same situations with the same status, headers and body.
 *
 * `message` may contain `{requestId}`, which becomes `$context.requestId` in the deployed template.
 */
export interface GatewayResponseSpec {
  /** The API Gateway ResponseType. */
  type: string;
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

export const GATEWAY_RESPONSES: readonly GatewayResponseSpec[] = [
  {
    type: 'UNAUTHORIZED',
    code: 'UNAUTHORIZED',
    message: 'A valid API key is required: send Authorization: Bearer <key>.',
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  { type: 'ACCESS_DENIED', code: 'ACCESS_DENIED', message: 'This API key may not call this operation.' },
  // API Gateway answers unknown routes and methods on resources it does not have with this type.
  { type: 'MISSING_AUTHENTICATION_TOKEN', code: 'NOT_FOUND', message: 'No such route; see /v1/inventory.' },
  {
    type: 'THROTTLED',
    code: 'THROTTLED',
    message: 'Too many requests; slow down and retry.',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  {
    type: 'QUOTA_EXCEEDED',
    code: 'THROTTLED',
    message: 'The request quota is exhausted; retry later.',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  { type: 'BAD_REQUEST_BODY', code: 'VALIDATION_FAILED', message: 'The request body is invalid.' },
  { type: 'BAD_REQUEST_PARAMETERS', code: 'VALIDATION_FAILED', message: 'The request parameters are invalid.' },
  { type: 'REQUEST_TOO_LARGE', code: 'PAYLOAD_TOO_LARGE', message: 'The request is too large.' },
  {
    type: 'UNSUPPORTED_MEDIA_TYPE',
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'The request media type is not supported.',
  },
  {
    type: 'AUTHORIZER_FAILURE',
    code: 'SERVICE_UNAVAILABLE',
    message: 'The API key could not be checked right now; retry shortly. Request id: {requestId}.',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  {
    type: 'AUTHORIZER_CONFIGURATION_ERROR',
    code: 'INTERNAL',
    message: 'An internal error occurred. Request id: {requestId}.',
  },
  { type: 'INTEGRATION_TIMEOUT', code: 'GATEWAY_TIMEOUT', message: 'The request timed out. Request id: {requestId}.' },
  {
    type: 'INTEGRATION_FAILURE',
    code: 'SERVICE_UNAVAILABLE',
    message: 'The service is temporarily unavailable. Request id: {requestId}.',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  { type: 'DEFAULT_4XX', code: 'BAD_REQUEST', message: 'The request could not be processed.' },
  { type: 'DEFAULT_5XX', code: 'INTERNAL', message: 'An internal error occurred. Request id: {requestId}.' },
];

/** Looks up the spec for a response type; every type used by the local gateway exists. */
export function gatewayResponse(type: string): GatewayResponseSpec & { status: number } {
  const spec = GATEWAY_RESPONSES.find((candidate) => candidate.type === type);
  if (!spec) throw new Error(`No gateway response for ${type}`);
  return { ...spec, status: ERROR_CODES[spec.code] };
}
