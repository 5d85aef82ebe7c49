import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBRecord } from 'aws-lambda';
import { changeEventJson } from '../functions/inventory/change-event';
import { changeEventOf } from '../functions/webhooks/change-records';
import {
  createWebhookSender,
  isWebhookSecret,
  type WebhookMessage,
  type WebhookTarget,
} from '../functions/webhooks/send';
import { LOCAL_WEBHOOK_RETRY_DELAYS_SECONDS, webhookRetryDelaySeconds } from '../service/webhooks';
import type { StreamHandler } from './lambda/stream-poller';

/** `npm start`'s one webhook receiver and its signing secret (docs/development.md). */
export const WEBHOOK_ENV = { url: 'PETSTORE_WEBHOOK_URL', secret: 'PETSTORE_WEBHOOK_SECRET' } as const;

/** The receiver the environment names, or undefined when it names none. @throws Error, in one line, on half a setting */
export function webhookTargetFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookTarget | undefined {
  const url = env[WEBHOOK_ENV.url] || undefined;
  const secret = env[WEBHOOK_ENV.secret] || undefined;
  if (url === undefined && secret === undefined) return undefined;
  if (url === undefined || secret === undefined)
    throw new Error(`${WEBHOOK_ENV.url} and ${WEBHOOK_ENV.secret} go together: set both, or neither`);
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw new Error(`${WEBHOOK_ENV.url} must be an http or https URL; got "${url}"`);
  if (!isWebhookSecret(secret))
    throw new Error(
      `${WEBHOOK_ENV.secret} must be whsec_ and the base64 of 24 to 64 random bytes ` +
        `(node -p "'whsec_'+crypto.randomBytes(32).toString('base64')")`,
    );
  return { url, secret };
}

/**
 * The stand-in for the stage's bus, queue and deliver function, on the history table's stream: each change event sent
 * at once, then retried after each of {@link LOCAL_WEBHOOK_RETRY_DELAYS_SECONDS} until acknowledged; the stream is
 * never held up by a receiver, so events can arrive out of order, as on a stage.
 */
export function webhookStreamHandler(target: WebhookTarget, log: (line: string) => void): StreamHandler {
  const send = createWebhookSender(target);
  const deliver = async (message: WebhookMessage) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(message);
      } catch (error) {
        const delay = webhookRetryDelaySeconds(LOCAL_WEBHOOK_RETRY_DELAYS_SECONDS, attempt);
        if (delay === undefined) return log(`webhooks: gave up after ${attempt} attempts: ${(error as Error).message}`);
        await sleep(delay * 1000, undefined, { ref: false });
      }
    }
  };
  return async (event) => {
    for (const record of event.Records) {
      const change = changeEventOfLogged(record, log);
      if (change) void deliver({ id: change.id, body: changeEventJson(change) });
    }
    return { batchItemFailures: [] };
  };
}

/** A record's change event; a row that is not one is logged and skipped, as the publisher would retry it in vain. */
function changeEventOfLogged(record: DynamoDBRecord, log: (line: string) => void) {
  try {
    return changeEventOf(record);
  } catch (error) {
    log(`webhooks: history row ${record.dynamodb?.SequenceNumber} is no change event: ${(error as Error).message}`);
    return undefined;
  }
}
