import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createHandler as createPublisher } from '../../functions/handlers/publish-changes';
import { type ChangeEvent, changeEventJson } from '../../functions/inventory/change-event';
import { busEventDetail, changeEventOf, webhookMessageOf } from '../../functions/webhooks/change-records';
import { isWebhookSecret, webhookHeaders } from '../../functions/webhooks/send';
import { webhookTargetFromEnv } from '../../local/webhooks';
import { FEED_COUNTER_KEY } from '../../service/names';
import { LOCAL_WEBHOOK_RETRY_DELAYS_SECONDS, WEBHOOK_TIMEOUT_MS } from '../../service/webhooks';
import { aLambdaContext } from '../fixtures/builders';
import { aChangeRow, aHistoryStreamRecord } from '../fixtures/change-rows';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/**
 * Standard Webhooks, spec/standard-webhooks.md (github:standard-webhooks/standard-webhooks), "Signature scheme" and
 * "Webhook headers": `webhook-id`, `webhook-timestamp` (unix seconds), `webhook-signature` `v1,` + base64 of the
 * HMAC-SHA256 of `msg_id.timestamp.payload`, keyed by the base64-decoded secret after `whsec_`.
 */
describe('Webhooks: signing as the Standard Webhooks specification says', () => {
  const message = { id: '42', body: '{"id":"42","petId":9223372036854775807,"version":3}' };
  const at = new Date('2026-12-06T10:00:00.750Z');

  it('sends the event id, the attempt time in unix seconds and a v1 signature the library verifies', () => {
    // Prepare: the library refuses a timestamp more than 5 minutes from its clock.
    const now = new Date();

    // Act
    const headers = webhookHeaders(new Webhook(SECRET), message, now);

    // Assess
    expect(headers['webhook-id']).toBe('42');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(() => new Webhook(SECRET).verify(message.body, headers)).not.toThrow();
    expect(() => new Webhook(SECRET).verify(message.body.replace('3', '4'), headers)).toThrow('No matching signature');
  });

  it('signs with the HMAC-SHA256 of "id.timestamp.body" keyed by the secret after whsec_, computed here by hand', () => {
    // Prepare
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');

    // Act
    const headers = webhookHeaders(new Webhook(SECRET), message, at);

    // Assess
    const expected = createHmac('sha256', key).update(`42.1796551200.${message.body}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('takes a secret only in its whsec_ form, of 24 to 64 bytes', () => {
    expect(isWebhookSecret(SECRET)).toBe(true);
    expect(isWebhookSecret(`whsec_${Buffer.alloc(24).toString('base64')}`)).toBe(true);
    expect(isWebhookSecret(`whsec_${Buffer.alloc(64).toString('base64')}`)).toBe(true);
    expect(isWebhookSecret(`whsec_${Buffer.alloc(23).toString('base64')}`)).toBe(false);
    expect(isWebhookSecret(`whsec_${Buffer.alloc(65).toString('base64')}`)).toBe(false);
    expect(isWebhookSecret(Buffer.alloc(32).toString('base64'))).toBe(false);
    expect(isWebhookSecret('whsec_not base64!')).toBe(false);
  });
});

describe('Webhooks: which history rows are change events, and their body', () => {
  it('makes the change event of a new row with its feed sequence, its petId exact in the body', () => {
    // Act
    const event = changeEventOf(aHistoryStreamRecord(aChangeRow({ feedSequence: '17', version: 4 })));

    // Assess
    expect(event).toMatchObject({ id: '17', version: 4, petId: '9223372036854775807', quantity: 5 });
    expect(changeEventJson(event as ChangeEvent)).toMatch(/^\{"id":"17","petId":9223372036854775807,"version":4,/);
  });

  it("makes none of an expiry, the feed's counter row or a row without a feed sequence", () => {
    const noFeed = aChangeRow();
    delete noFeed.feedSequence;
    const counter = {
      ...aChangeRow(),
      petId: { N: FEED_COUNTER_KEY.petId },
      sequence: { S: FEED_COUNTER_KEY.sequence },
    };
    expect(changeEventOf(aHistoryStreamRecord(aChangeRow(), 'REMOVE'))).toBeUndefined();
    expect(changeEventOf(aHistoryStreamRecord(counter))).toBeUndefined();
    expect(changeEventOf(aHistoryStreamRecord(noFeed))).toBeUndefined();
  });

  it('carries the exact body through the bus: a 19-digit petId is a string in the detail and digits in the body', () => {
    // Prepare: what a rule sends SQS is the whole event, its detail parsed by EventBridge and written again.
    const event = changeEventOf(aHistoryStreamRecord(aChangeRow({ feedSequence: '9' }))) as ChangeEvent;
    const detail = JSON.parse(busEventDetail(event)) as Record<string, unknown>;
    const sqsBody = JSON.stringify({
      version: '0',
      source: 'petstore.inventory',
      'detail-type': 'InventoryChanged',
      detail,
    });

    // Act
    const message = webhookMessageOf(sqsBody);

    // Assess
    expect(detail).toMatchObject({ id: '9', petId: '9223372036854775807', version: 1 });
    expect(message).toEqual({ id: '9', body: changeEventJson(event) });
    expect(() => webhookMessageOf('{"detail":{"id":9}}')).toThrow('carries no change event');
  });
});

describe('Function: publish-changes', () => {
  it('puts each change event once and reports the records it could not put as batch item failures', async () => {
    // Prepare
    const published: string[] = [];
    const handler = createPublisher({
      publish: async (event) => {
        if (event.id === '2') throw new Error('PutEvents refused 2: InternalFailure');
        published.push(event.id);
      },
    });
    const records = ['1', '2', '3'].map((feedSequence) => aHistoryStreamRecord(aChangeRow({ feedSequence })));
    records.push(aHistoryStreamRecord(aChangeRow(), 'REMOVE'));

    // Act
    const result = await handler({ Records: records }, aLambdaContext());

    // Assess
    expect(published.sort()).toEqual(['1', '3']);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: records[1]?.dynamodb?.SequenceNumber }]);
  });
});

describe('npm start: the webhook settings', () => {
  const url = 'http://127.0.0.1:9000/hooks';

  it('sends nothing with neither set, and to the URL with both', () => {
    expect(webhookTargetFromEnv({})).toBeUndefined();
    expect(webhookTargetFromEnv({ PETSTORE_WEBHOOK_URL: url, PETSTORE_WEBHOOK_SECRET: SECRET })).toEqual({
      url,
      secret: SECRET,
    });
  });

  it('refuses, in one line, one without the other, a secret not in whsec_ form and a URL that is not http(s)', () => {
    const refusals = [
      { PETSTORE_WEBHOOK_URL: url },
      { PETSTORE_WEBHOOK_SECRET: SECRET },
      { PETSTORE_WEBHOOK_URL: url, PETSTORE_WEBHOOK_SECRET: 'hunter2' },
      { PETSTORE_WEBHOOK_URL: 'ftp://example.com', PETSTORE_WEBHOOK_SECRET: SECRET },
    ].map((env) => {
      try {
        webhookTargetFromEnv(env);
        return 'accepted';
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect(refusals).toEqual([
      'PETSTORE_WEBHOOK_URL and PETSTORE_WEBHOOK_SECRET go together: set both, or neither',
      'PETSTORE_WEBHOOK_URL and PETSTORE_WEBHOOK_SECRET go together: set both, or neither',
      expect.stringMatching(/^PETSTORE_WEBHOOK_SECRET must be whsec_ and the base64 of 24 to 64 random bytes/),
      'PETSTORE_WEBHOOK_URL must be an http or https URL; got "ftp://example.com"',
    ]);
    for (const message of refusals) expect(message).not.toContain('\n');
  });

  it('retries at least three times within 30 s even when every attempt times out', () => {
    const attempts = LOCAL_WEBHOOK_RETRY_DELAYS_SECONDS.length + 1;
    const lastAttemptEndsMs =
      attempts * WEBHOOK_TIMEOUT_MS + LOCAL_WEBHOOK_RETRY_DELAYS_SECONDS.reduce((sum, delay) => sum + delay * 1000, 0);
    expect(attempts - 1).toBeGreaterThanOrEqual(3);
    expect(lastAttemptEndsMs).toBeLessThanOrEqual(30_000);
  });
});
