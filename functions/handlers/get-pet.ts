import { METRIC_NAMES } from '../../service/metric-names';
import { PETS_DEPRECATED_AT } from '../../service/routes';
import { ENV, optionalEnv } from '../config';
import { createApiHandler } from '../http/middleware';
import { errorResponse } from '../http/responses';
import { metrics } from '../observability/metrics';

/** `Deprecation` (RFC 9745) and, when configured, `Sunset` (RFC 8594) of `/pets/{petId}`. */
export function deprecationHeaders(env: { deprecatedAt?: string; sunsetAt?: string }): Record<string, string> {
  const headers: Record<string, string> = {};
  const deprecatedAt = parseDate(env.deprecatedAt);
  if (deprecatedAt) headers.Deprecation = `@${Math.floor(deprecatedAt.getTime() / 1000)}`;
  const sunsetAt = parseDate(env.sunsetAt);
  if (sunsetAt) headers.Sunset = sunsetAt.toUTCString();
  return headers;
}

function parseDate(value: string | undefined): Date | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** `GET /pets/{petId}` (deprecated): the spec does not define its behaviour, so it answers 501. */
export const handler = createApiHandler(async function getPet() {
  metrics.addMetric(METRIC_NAMES.deprecatedRouteCalled, 'Count', 1);
  return errorResponse(
    'NOT_IMPLEMENTED',
    'GET /pets/{petId} is deprecated and its behaviour is not defined by this service; use GET /inventory.',
    deprecationHeaders({
      deprecatedAt: optionalEnv(ENV.petsDeprecatedAt) ?? PETS_DEPRECATED_AT,
      sunsetAt: optionalEnv(ENV.petsSunsetAt),
    }),
  );
});
