/**
 * The delay before retry `attempt` (1 for the first retry): exponential back-off with full jitter, a random delay
 * up to `baseMs × 2^(attempt-1)`, capped at `maxMs`, so that callers throttled together do not retry together
 * ("Exponential Backoff And Jitter", AWS Architecture Blog).
 */
export function backoffDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random) {
  return Math.floor(random() * Math.min(maxMs, baseMs * 2 ** (attempt - 1)));
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
