/** The delay before retry `attempt` (from 1): exponential back-off with full jitter, capped at `maxMs`. */
export function backoffDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random) {
  return Math.floor(random() * Math.min(maxMs, baseMs * 2 ** (attempt - 1)));
}
