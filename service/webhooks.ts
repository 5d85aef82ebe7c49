/**
 * How change events leave the service: on a stage's event bus, then to each webhook subscriber (docs/deploying.md,
 * "Webhooks"); under `npm start`, straight to one receiver (docs/development.md).
 */

/** The `source` and `detail-type` of every change event on the stage's bus: what an AWS-side rule matches on. */
export const CHANGE_EVENT_SOURCE = 'petstore.inventory';
export const CHANGE_EVENT_DETAIL_TYPE = 'InventoryChanged';

/** One webhook attempt's time-out: EventBridge API destinations' own, so a receiver acknowledges before it works. */
export const WEBHOOK_TIMEOUT_MS = 5_000;

/**
 * Seconds before each retry of a deployed webhook, by attempt: the Standard Webhooks example schedule ("Deliverability
 * and reliability") capped at SQS's longest visibility timeout, 12 hours. The last retry comes 29.6 hours after the
 * first attempt; a message that fails it goes to the dead-letter queue.
 */
export const WEBHOOK_RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 12 * 3600] as const;

/** Seconds before each retry under `npm start`: three retries, all within 30 seconds even when each attempt times out. */
export const LOCAL_WEBHOOK_RETRY_DELAYS_SECONDS = [1, 2, 4] as const;

/** The delay before the retry that follows a failed attempt (1 for the first); undefined past the last retry. */
export function webhookRetryDelaySeconds(delays: readonly number[], failedAttempt: number): number | undefined {
  return delays[failedAttempt - 1];
}
