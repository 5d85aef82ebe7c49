import { numberEnv } from '../functions/config';
import type { ThrottleSettings } from '../service/stage-limits';

/**
 * The stage's default method throttling, as API Gateway applies it ("Throttle requests to your REST APIs for better
 * throughput in API Gateway"): a token bucket per method (the API Gateway method a request resolves to, e.g.
 * `GET /inventory` or the `ANY /{proxy+}` catch-all) that holds at most `burstLimit` tokens, refills at `rateLimit`
 * tokens a second and starts full; a request takes a token or is refused with 429. Undefined when throttling is off.
 */
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

/**
 * The throttling `npm start` applies: the given stage limits unless `PETSTORE_RATE_LIMIT` / `PETSTORE_BURST_LIMIT`
 * override them; either set to `0` turns throttling off (load tests, the bench).
 */
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
