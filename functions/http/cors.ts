import type { MiddlewareObj } from '@middy/core';
import httpCors from '@middy/http-cors';
import { CORS_EXPOSED_HEADERS } from '../../service/gateway-responses';

/** Headers a browser may read besides the CORS-safelisted ones: the same on every answer, API Gateway's too. */
export const EXPOSED_HEADERS = CORS_EXPOSED_HEADERS.join(', ');

/** Parses a comma-separated list of allowed origins; blanks are ignored. */
export function parseAllowedOrigins(value: string | undefined): readonly string[] {
  return (value ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0);
}

/** CORS headers on every actual response (API Gateway answers the preflight), or none when no origin is allowed. */
export function cors(allowed: readonly string[]): MiddlewareObj | undefined {
  if (allowed.length === 0) return undefined;
  return httpCors({ origins: [...allowed], exposeHeaders: EXPOSED_HEADERS });
}
