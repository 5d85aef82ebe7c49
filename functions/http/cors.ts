/**
 * CORS for browser clients of a stage that allows some origins (`CORS_ALLOWED_ORIGINS`, comma-separated, set by the
 * stack from the stage config; unset = CORS off, no headers at all). API Gateway answers the preflight; every
 * actual response needs the allow-origin header too, which is this module's job.
 */

/** Headers a browser may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = 'Retry-After, Deprecation, Sunset, WWW-Authenticate, x-amzn-RequestId';

/** Parses the allowed origins; blanks are ignored. */
export function parseAllowedOrigins(value: string | undefined): readonly string[] {
  return (value ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0);
}

/** The CORS headers of a response to a request from `origin`: none unless the origin is allowed. */
export function corsHeaders(origin: string | undefined, allowed: readonly string[]): Record<string, string> {
  if (allowed.length === 0) return {};
  const headers: Record<string, string> = { Vary: 'Origin' };
  if (origin !== undefined && allowed.includes(origin)) {
    headers['Access-Control-Allow-Origin'] = origin;
    headers['Access-Control-Expose-Headers'] = EXPOSED_HEADERS;
  }
  return headers;
}
