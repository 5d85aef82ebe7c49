import type { MiddlewareObj } from '@middy/core';
import httpCors from '@middy/http-cors';
import { CORS_EXPOSED_HEADERS } from '../../service/gateway-responses';

/**
 * CORS for browser clients of a stage that allows some origins (`CORS_ALLOWED_ORIGINS`, comma-separated, set by the
 * stack from the stage config; unset = CORS off, no headers at all). API Gateway answers the preflight; every
 * actual response needs the allow-origin header too, which @middy/http-cors adds.
 */

/** Headers a browser may read besides the CORS-safelisted ones: the same on every answer, API Gateway's too. */
export const EXPOSED_HEADERS = CORS_EXPOSED_HEADERS.join(', ');

/** Parses a comma-separated list of allowed origins; blanks are ignored. */
export function parseAllowedOrigins(value: string | undefined): readonly string[] {
  return (value ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0);
}

/**
 * The CORS middleware for the allowed origins, or none when CORS is off: an allowed `Origin` is echoed with
 * `Vary: Origin` and the exposed headers; any other gets no allow-origin header. (Every answer is `no-store`, so
 * no cache keeps an answer for the wrong origin.)
 */
export function cors(allowed: readonly string[]): MiddlewareObj | undefined {
  if (allowed.length === 0) return undefined;
  return httpCors({ origins: [...allowed], exposeHeaders: EXPOSED_HEADERS });
}
