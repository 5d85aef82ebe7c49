import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { createHandler, secretSender } from '../../functions/handlers/deliver-webhook';
import { createWebhookSender } from '../../functions/webhooks/send';
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../service/webhooks';
import { aLambdaContext } from '../fixtures/builders';
import { type ReceiverAnswer, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;

/** An SQS record as Lambda delivers it from a subscriber's queue: the EventBridge event a rule sent. */
function aQueueRecord(id: string, receiveCount: number): SQSRecord {
  const body = `{"id":"${id}","petId":9223372036854775807,"version":1}`;
  return {
    messageId: `message-${id}`,
    receiptHandle: `receipt-${id}`,
    body: JSON.stringify({ source: 'petstore.inventory', 'detail-type': 'InventoryChanged', detail: { id, body } }),
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: '0',
      SenderId: 'events',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:webhooks',
    awsRegion: 'eu-west-1',
  };
}

/**
 * The deliver function against a real HTTP receiver on 127.0.0.1: SQS partial batch responses ("Handling errors for
 * an SQS event source in Lambda": ReportBatchItemFailures) and a retry put off with ChangeMessageVisibility.
 */
describe('Function: deliver-webhook', () => {
  let receiver: WebhookReceiver;
  afterEach(() => receiver.close());

  const deliver = async (answer: (id: string) => ReceiverAnswer, records: SQSRecord[]) => {
    receiver = await startWebhookReceiver((request) => answer(String(request.headers['webhook-id'])));
    const delays: [string, number][] = [];
    const handler = createHandler({
      send: createWebhookSender({ url: receiver.url, secret: SECRET }),
      retryAfter: async (receiptHandle, seconds) => {
        delays.push([receiptHandle, seconds]);
      },
    });
    const result = await handler({ Records: records } satisfies SQSEvent, aLambdaContext());
    return { failures: result.batchItemFailures.map((failure) => failure.itemIdentifier).sort(), delays };
  };

  it('acknowledges what the receiver answered 2xx, signed so that it verifies, the body exactly as queued', async () => {
    // Act
    const { failures, delays } = await deliver(() => 204, [aQueueRecord('1', 1), aQueueRecord('2', 1)]);

    // Assess
    expect(failures).toEqual([]);
    expect(delays).toEqual([]);
    expect(receiver.received.map((webhook) => webhook.headers['webhook-id']).sort()).toEqual(['1', '2']);
    for (const { headers, body } of receiver.received) {
      expect(body).toBe(`{"id":"${headers['webhook-id']}","petId":9223372036854775807,"version":1}`);
      expect(headers['content-type']).toBe('application/json');
      expect(() => new Webhook(SECRET).verify(body, headers as Record<string, string>)).not.toThrow();
    }
  });

  it('fails a 500 and a redirect, putting each off by the schedule for its receive count', async () => {
    // Act
    const answers: Record<string, ReceiverAnswer> = { '1': 500, '2': 200, '3': 302 };
    const { failures, delays } = await deliver(
      (id) => answers[id] ?? 200,
      [aQueueRecord('1', 1), aQueueRecord('2', 1), aQueueRecord('3', 4)],
    );

    // Assess
    expect(failures).toEqual(['message-1', 'message-3']);
    expect(delays.sort()).toEqual([
      ['receipt-1', WEBHOOK_RETRY_DELAYS_SECONDS[0]],
      ['receipt-3', WEBHOOK_RETRY_DELAYS_SECONDS[3]],
    ]);
  });

  it('fails a message it cannot read alone, delivering the others of its batch once', async () => {
    // Act
    const unreadable = { ...aQueueRecord('2', 1), body: 'not json' };
    const { failures } = await deliver(() => 204, [aQueueRecord('1', 1), unreadable, aQueueRecord('3', 1)]);
    // Assess
    expect(failures).toEqual(['message-2']);
    expect(receiver.received.map((webhook) => webhook.headers['webhook-id']).sort()).toEqual(['1', '3']);
  });

  it('fails an attempt the receiver does not answer in time', async () => {
    // Act
    const { failures, delays } = await deliver(() => 'hang', [aQueueRecord('7', 2)]);

    // Assess
    expect(failures).toEqual(['message-7']);
    expect(delays).toEqual([['receipt-7', WEBHOOK_RETRY_DELAYS_SECONDS[1]]]);
  });

  it('puts the last attempt off not at all, so SQS moves it to the dead-letter queue at once', async () => {
    // Act
    const { failures, delays } = await deliver(() => 503, [aQueueRecord('8', WEBHOOK_RETRY_DELAYS_SECONDS.length + 1)]);

    // Assess
    expect(failures).toEqual(['message-8']);
    expect(delays).toEqual([['receipt-8', 0]]);
  });

  it('signs with whsec_ and the stored secret, read from Secrets Manager once, and again only after a failed read', async () => {
    // Prepare: Secrets Manager cannot run here; a stand-in answers as GetSecretValue does (SecretString).
    receiver = await startWebhookReceiver(() => 200);
    const stored = SECRET.slice('whsec_'.length);
    const reads: unknown[] = [];
    const secrets = {
      send: async (command: unknown) => {
        reads.push(command);
        if (reads.length === 1) throw new Error('ThrottlingException');
        return { SecretString: stored };
      },
    } as never;
    const send = secretSender(secrets, receiver.url, 'arn:aws:secretsmanager:eu-west-1:000000000000:secret:till');

    // Act
    const first = await send({ id: '1', body: '{}' }).then(
      () => 'sent',
      (error: Error) => error.message,
    );
    await send({ id: '2', body: '{}' });
    await send({ id: '3', body: '{}' });

    // Assess
    expect(first).toBe('ThrottlingException');
    expect(reads).toHaveLength(2);
    expect(receiver.received).toHaveLength(2);
    for (const { headers, body } of receiver.received)
      expect(() => new Webhook(SECRET).verify(body, headers as Record<string, string>)).not.toThrow();
  });
});
