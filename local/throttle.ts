import { numberEnv } from '../functions/config';
import type { ThrottleSettings } from '../service/stage-limits';

/** The stage's method throttling: a full token bucket per API Gateway method, `burstLimit` deep, refilled at
 * `rateLimit` a second ("Throttle requests to your REST APIs"). Undefined when off. */
export function createThrottle(
  settings: ThrottleSettings | undefined,
  clock: () => number = () => performance.now(),
): ((method: string) => boolean) | undefined {
  if (!settings || settings.rateLimit <= 0 || settings.burstLimit <= 0) return undefined;
  const buckets = new Map<string, { tokens: number; updatedAt: number }>();
  return function allow(method: string): boolean {
    const now = clock();
    const bucket = buckets.get(method) ?? { tokens: settings.burstLimit, updatedAt: now };
    const refill = ((now - bucket.updatedAt) / 1000) * settings.rateLimit;
    bucket.tokens = Math.min(settings.burstLimit, bucket.tokens + refill);
    bucket.updatedAt = now;
    buckets.set(method, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };
}

/** The stage's limits unless `PETSTORE_RATE_LIMIT` / `PETSTORE_BURST_LIMIT` say otherwise; either `0` turns it off. */
export function throttlingFromEnv(
  stageDefault: ThrottleSettings,
  env: NodeJS.ProcessEnv = process.env,
): ThrottleSettings | undefined {
  // API Gateway's rate is requests per second (fractions allowed), its burst a count of requests.
  const rateLimit = numberEnv('PETSTORE_RATE_LIMIT', stageDefault.rateLimit, { integer: false }, env);
  const burstLimit = numberEnv('PETSTORE_BURST_LIMIT', stageDefault.burstLimit, {}, env);
  if (rateLimit === 0 || burstLimit === 0) return undefined;
  return { rateLimit, burstLimit };
}
