import { numberEnv } from '../functions/config';
import type { ThrottleSettings } from '../service/stage-limits';

/**
 * The stage's throttling, as API Gateway applies it ("Throttle requests to your REST APIs for better throughput in
 * API Gateway"): a token bucket per method that holds at most `burstLimit` tokens, refills at `rateLimit` tokens a
 * second and starts full; a request takes a token or is refused with 429.
 */

/** Milliseconds from any fixed origin. */
export type Clock = () => number;

/** One token bucket. */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly settings: ThrottleSettings,
    private readonly clock: Clock = () => performance.now(),
  ) {
    this.tokens = settings.burstLimit;
    this.updatedAt = clock();
  }

  /** Takes a token if there is one; false means the request is throttled. */
  take(): boolean {
    const now = this.clock();
    const refill = ((now - this.updatedAt) / 1000) * this.settings.rateLimit;
    this.tokens = Math.min(this.settings.burstLimit, this.tokens + refill);
    this.updatedAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * The stage's default method throttling: one bucket per method (the API Gateway method a request resolves to, e.g.
 * `GET /inventory` or the `ANY /{proxy+}` catch-all). Returns undefined when throttling is off.
 */
export function createThrottle(
  settings: ThrottleSettings | undefined,
  clock?: Clock,
): ((method: string) => boolean) | undefined {
  if (!settings || settings.rateLimit <= 0 || settings.burstLimit <= 0) return undefined;
  const buckets = new Map<string, TokenBucket>();
  return function allow(method: string): boolean {
    let bucket = buckets.get(method);
    if (!bucket) {
      bucket = new TokenBucket(settings, clock);
      buckets.set(method, bucket);
    }
    return bucket.take();
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
