/**
 * The documented set of Error `code` values. Every non-2xx response carries one of these, with `status` equal to
 * the HTTP status. The same list is in openapi.yaml (a test keeps them in step) and docs/api.md.
 */
export const ERROR_CODES = {
  VALIDATION_FAILED: 400,
  MALFORMED_JSON: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  ACCESS_DENIED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  CONFLICT: 409,
  /** A change feed cursor older than the events the feed keeps. */
  CURSOR_EXPIRED: 410,
  /** The same Idempotency-Key was sent with another request. */
  IDEMPOTENCY_KEY_REUSED: 422,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  THROTTLED: 429,
  INTERNAL: 500,
  NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Seconds a client is asked to wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;
