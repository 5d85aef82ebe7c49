import { type AttributeValue, type DynamoDBClient, paginateScan } from '@aws-sdk/client-dynamodb';
import { Webhook } from 'standardwebhooks';
import { changeEventJson } from '../../functions/inventory/change-event';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { toChangeEvent } from '../../functions/store/history-table';
import { LOCAL_TABLE_NAMES } from '../../service/local-dynamodb';
import { type LocalApiProcess, startLocalApiProcess } from '../helpers/api-process';
import { call } from '../helpers/http';
import { until } from '../helpers/until';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
/** Each webhook id is refused this many times, then acknowledged. */
const REFUSALS = 2;

/**
 * `npm start` with PETSTORE_WEBHOOK_URL and PETSTORE_WEBHOOK_SECRET, against a receiver on 127.0.0.1 that refuses each
 * webhook twice: every change still arrives, signed as Standard Webhooks says (spec/standard-webhooks.md, "Signature
 * scheme"), with the feed's id, retried at least three times within 30 s (docs/development.md).
 */
describe('npm start: webhooks to PETSTORE_WEBHOOK_URL', () => {
  let receiver: WebhookReceiver;
  let started: LocalApiProcess;
  let dynamo: DynamoDBClient;

  beforeAll(async () => {
    receiver = await startWebhookReceiver((_request, attempt) => (attempt <= REFUSALS ? 500 : 204));
    started = await startLocalApiProcess({
      env: { PETSTORE_WEBHOOK_URL: receiver.url, PETSTORE_WEBHOOK_SECRET: SECRET, PETSTORE_RATE_LIMIT: '0' },
    });
    dynamo = createDynamoClient({
      endpoint: started.dynamoEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  }, 90_000);

  afterAll(async () => {
    dynamo?.destroy();
    await started?.stop();
    await receiver?.close();
  });

  /** The acknowledged webhook of each id (its third attempt), checked against the spec's signature on the way. */
  const acknowledged = () => {
    const byId = new Map<string, string>();
    for (const { headers, body } of receiver.received) {
      const attempts = receiver.received.filter((webhook) => webhook.headers['webhook-id'] === headers['webhook-id']);
      if (attempts.length > REFUSALS) byId.set(String(headers['webhook-id']), body);
    }
    return byId;
  };

  /** Every attempt carries the three headers and a signature the library verifies over its exact body. */
  const expectAllSigned = () => {
    for (const { headers, body } of receiver.received) {
      expect(headers['webhook-timestamp']).toMatch(/^[0-9]+$/);
      expect(() => new Webhook(SECRET).verify(body, headers as Record<string, string>)).not.toThrow();
    }
  };

  it('says at start where webhooks go', () => {
    expect(started.output()).toContain(`Webhooks: every change, signed, to ${receiver.url}`);
  });

  it('delivers every change made through the API after two refusals, with the id the feed gives it, its body the change event', async () => {
    // Act
    for (const adjustBy of [3, -1, 2]) {
      const response = await call(started.baseUrl, 'PATCH', '/inventory/10', {
        headers: { Authorization: `Bearer ${started.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ adjustBy }),
      });
      expect(response.status).toBe(200);
    }

    // Assess: the demo inventory's creation and the three changes, each as the feed has it.
    let feedRows: Record<string, AttributeValue>[] = [];
    await until(async () => {
      feedRows = (await historyRowsOf('10')).filter((row) => row.feedSequence !== undefined);
      return feedRows.length === 4 && feedRows.every((row) => acknowledged().has(row.feedSequence?.N ?? ''));
    }, 40_000);
    for (const row of feedRows)
      expect(acknowledged().get(row.feedSequence?.N ?? '')).toBe(changeEventJson(toChangeEvent(row)));
    expectAllSigned();
  }, 60_000);

  async function historyRowsOf(petId: string): Promise<Record<string, AttributeValue>[]> {
    const rows: Record<string, AttributeValue>[] = [];
    for await (const page of paginateScan({ client: dynamo }, { TableName: LOCAL_TABLE_NAMES.history }))
      rows.push(...(page.Items ?? []).filter((row) => row.petId?.N === petId));
    return rows;
  }
});

describe('npm start: webhook settings refused at start', () => {
  it('refuses a URL without its secret, in one line, and starts nothing', async () => {
    // Act
    const refusal = await startLocalApiProcess({ env: { PETSTORE_WEBHOOK_URL: 'http://127.0.0.1:9/hooks' } }).then(
      () => 'started',
      (error: Error) => error.message,
    );

    // Assess
    expect(refusal).toMatch(/^npm start exited with 1:\n/);
    expect(
      refusal
        .split('\n')
        .filter((line) => line.length > 0)
        .slice(1),
    ).toEqual(['npm start failed: PETSTORE_WEBHOOK_URL and PETSTORE_WEBHOOK_SECRET go together: set both, or neither']);
  });
});
