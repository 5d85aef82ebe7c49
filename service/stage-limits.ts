import type { StageName } from './names';

/** Steady requests per second and burst of a stage (API Gateway's stage throttling). */
export interface ThrottleSettings {
  rateLimit: number;
  burstLimit: number;
}

/** Each stage's API Gateway throttling; `npm start` applies staging's, so a client meets 429 locally too. */
export const STAGE_THROTTLING: Readonly<Record<StageName, ThrottleSettings>> = {
  staging: { rateLimit: 20, burstLimit: 40 },
  production: { rateLimit: 100, burstLimit: 200 },
};

/**
 * Seconds an authorizer decision is reused for the same token, on both stages and by default in `npm start`: also
 * how long a revoked key keeps working where no flush reached.
 */
export const AUTHORIZER_CACHE_TTL_SECONDS = 300;
