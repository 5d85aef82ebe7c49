import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { WEBHOOK_RETRY_DELAYS_SECONDS, webhookRetryDelaySeconds } from '../../service/webhooks';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import { observed } from '../observability/chain';
import { logger } from '../observability/logger';
import { metrics } from '../observability/metrics';
import { annotateTrace, tracer } from '../observability/tracer';
import { failedItems } from '../webhooks/batch';
import { webhookMessageOf } from '../webhooks/change-records';
import { createWebhookSender, type WebhookMessage } from '../webhooks/send';

/** What a deliver function needs: a sender to its subscriber, and a way to put a message's next attempt off. */
export interface DeliverDeps {
  send: (message: WebhookMessage) => Promise<void>;
  /** Hides a received message from the queue for `seconds` (its next attempt). */
  retryAfter: (receiptHandle: string, seconds: number) => Promise<void>;
}

/**
 * A subscriber's deliver function: each webhook of a batch from its queue, sent at once; one not acknowledged waits
 * {@link WEBHOOK_RETRY_DELAYS_SECONDS} by its receive count and is a batch item failure, so SQS offers it again then,
 * until the queue's maxReceiveCount sends it to the dead-letter queue.
 */
export function createHandler(deps: Deps<DeliverDeps>) {
  const resolve = resolveDeps(deps);
  return observed(middy<SQSEvent, SQSBatchResponse>()).handler(async function deliverWebhooks(event) {
    const { send, retryAfter } = resolve();
    const batchItemFailures = await failedItems(event.Records, {
      process: (record) => send(webhookMessageOf(record.body)),
      identify: (record) => record.messageId,
      onFailure: (record) => delayRetry(record, retryAfter),
    });
    metrics.addMetric(METRIC_NAMES.webhooksDelivered, 'Count', event.Records.length - batchItemFailures.length);
    metrics.addMetric(METRIC_NAMES.webhookAttemptsFailed, 'Count', batchItemFailures.length);
    annotateTrace({ route: 'webhook queue', outcome: batchItemFailures.length === 0 ? 'delivered' : 'partial' });
    return { batchItemFailures };
  });
}

/**
 * Puts a failed message's next attempt off by the schedule, past its last retry not at all (SQS then moves it to the
 * dead-letter queue); if that fails, it comes back after the queue's visibility timeout.
 */
async function delayRetry(record: SQSRecord, retryAfter: DeliverDeps['retryAfter']): Promise<void> {
  const attempt = Number(record.attributes.ApproximateReceiveCount);
  const seconds = webhookRetryDelaySeconds(WEBHOOK_RETRY_DELAYS_SECONDS, attempt) ?? 0;
  await retryAfter(record.receiptHandle, seconds).catch((error: Error) =>
    logger.warn('retry not delayed: the queue visibility timeout applies', { messageId: record.messageId, error }),
  );
}

/**
 * The subscriber's sender, its secret read from Secrets Manager on first use and kept (read again only after a failed
 * read); the stored value is the secret's base64, whose Standard Webhooks form is `whsec_` and it.
 */
export function secretSender(
  secrets: Pick<SecretsManagerClient, 'send'>,
  url: string,
  secretArn: string,
): DeliverDeps['send'] {
  const load = () =>
    secrets
      .send(new GetSecretValueCommand({ SecretId: secretArn }))
      .then(({ SecretString }) => createWebhookSender({ url, secret: `whsec_${SecretString ?? ''}` }));
  let sender: Promise<DeliverDeps['send']> | undefined;
  return async (message) => {
    sender ??= load().catch((error: Error) => {
      sender = undefined;
      throw error;
    });
    return (await sender)(message);
  };
}

export const handler = createHandler(
  once((): DeliverDeps => {
    const sqs = tracer.captureAWSv3Client(new SQSClient({}));
    const queueUrl = requireEnv(ENV.webhookQueueUrl);
    return {
      send: secretSender(
        tracer.captureAWSv3Client(new SecretsManagerClient({})),
        requireEnv(ENV.webhookUrl),
        requireEnv(ENV.webhookSecretArn),
      ),
      retryAfter: async (receiptHandle, seconds) => {
        await sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: queueUrl,
            ReceiptHandle: receiptHandle,
            VisibilityTimeout: seconds,
          }),
        );
      },
    };
  }),
);
