import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SNSClient } from '@aws-sdk/client-sns';
import {
  type AlarmDeliveryOptions,
  type AlarmSubscription,
  checkAlarmDelivery,
  PENDING_CONFIRMATION,
  snsSubscriptionLister,
} from '../../functions/self-check/alarm-delivery';
import { SelfCheckFailedError } from '../../functions/self-check/self-check';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:PetStoreInventory-production-AlarmTopic';
const CONFIRMED: AlarmSubscription = {
  subscriptionArn: `${TOPIC}:0b5e7a52-1c3f-4d8e-9a61-2f4b8c9d0e1f`,
  protocol: 'email',
};
const PENDING: AlarmSubscription = { subscriptionArn: PENDING_CONFIRMATION, protocol: 'email' };

function options(subscriptions: AlarmSubscription[] | Error, overrides: Partial<AlarmDeliveryOptions> = {}) {
  return {
    topicArn: TOPIC,
    onCallTopic: false,
    required: true,
    listSubscriptions: async () => {
      if (subscriptions instanceof Error) throw subscriptions;
      return subscriptions;
    },
    ...overrides,
  };
}

/**
 * The self-check's reading of SNS: an alarm reaches only confirmed subscriptions; SNS deletes an e-mail subscription
 * left unconfirmed for 48 hours, and an alarm e-mail's unsubscribe link deletes a confirmed one (Amazon SNS
 * Developer Guide, "Deleting an Amazon SNS subscription and topic":
 * https://docs.aws.amazon.com/sns/latest/dg/sns-delete-subscription-topic.html).
 */
describe('Self-check: alarm delivery', () => {
  it('passes with a confirmed subscription, counting those still pending', async () => {
    await expect(checkAlarmDelivery(options([CONFIRMED, PENDING]))).resolves.toEqual({ confirmed: 1, pending: 1 });
  });

  it('passes with no subscription of its own when the alarms also reach a configured on-call topic', async () => {
    await expect(checkAlarmDelivery(options([], { onCallTopic: true }))).resolves.toEqual({ confirmed: 0, pending: 0 });
  });

  it("passes with a warning while the only subscription awaits confirmation (a first deploy's e-mail)", async () => {
    const result = await checkAlarmDelivery(options([PENDING]));
    expect(result).toMatchObject({ confirmed: 0, pending: 1 });
    expect(result.warning).toMatch(/reach no one until the subscription e-mail .* is confirmed/);
    expect(result.warning).toMatch(/48 hours/);
  });

  it('fails a stage that must page when its topic has no subscription, naming the topic and the remedy', async () => {
    const failure = await checkAlarmDelivery(options([])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SelfCheckFailedError);
    expect((failure as Error).message).toMatch(/^Alarm delivery: alarms reach no one: the alarm topic arn:aws:sns:/);
    expect((failure as Error).message).toContain(TOPIC);
    expect((failure as Error).message).toContain('aws sns subscribe --topic-arn <AlarmTopicArn> --protocol email');
  });

  it('only warns on a stage that need not page', async () => {
    const result = await checkAlarmDelivery(options([], { required: false }));
    expect(result.warning).toMatch(/^alarms reach no one: the alarm topic/);
  });

  it('fails a stage that must page when the subscriptions cannot be listed, and only warns elsewhere', async () => {
    const denied = Object.assign(new Error('not authorized'), { name: 'AuthorizationErrorException' });
    const failure = await checkAlarmDelivery(options(denied)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SelfCheckFailedError);
    expect((failure as Error).message).toBe(
      `Alarm delivery: could not list the subscriptions of the alarm topic ${TOPIC}: AuthorizationErrorException`,
    );
    const warned = await checkAlarmDelivery(options(denied, { required: false }));
    expect(warned.warning).toMatch(/^could not list the subscriptions/);
  });
});

/**
 * SNS speaks the AWS Query protocol: a form-encoded POST with `Action`, answered in XML, paged by `NextToken`
 * (Amazon SNS API Reference, ListSubscriptionsByTopic:
 * https://docs.aws.amazon.com/sns/latest/api/API_ListSubscriptionsByTopic.html). This stand-in answers as that page
 * shows, so the SDK's own parsing and paging are what is tested; no SNS runs on this machine.
 */
describe('Self-check: snsSubscriptionLister through the SDK', () => {
  const member = (arn: string, protocol: string, endpoint: string) =>
    `<member><TopicArn>${TOPIC}</TopicArn><Protocol>${protocol}</Protocol><SubscriptionArn>${arn}</SubscriptionArn>` +
    `<Owner>123456789012</Owner><Endpoint>${endpoint}</Endpoint></member>`;
  const page = (members: string, nextToken?: string) =>
    '<ListSubscriptionsByTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><ListSubscriptionsByTopicResult>' +
    `<Subscriptions>${members}</Subscriptions>${nextToken ? `<NextToken>${nextToken}</NextToken>` : ''}` +
    '</ListSubscriptionsByTopicResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata>' +
    '</ListSubscriptionsByTopicResponse>';

  async function standIn(answer: (form: URLSearchParams) => { status: number; body: string }) {
    const forms: URLSearchParams[] = [];
    const server: Server = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += String(chunk);
      const form = new URLSearchParams(text);
      forms.push(form);
      const { status, body } = answer(form);
      res.writeHead(status, { 'Content-Type': 'text/xml' });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new SNSClient({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    const close = async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    return { client, forms, close };
  }

  it('reads every page, each subscription as its ARN (PendingConfirmation until confirmed) and protocol, never the address', async () => {
    const { client, forms, close } = await standIn((form) => ({
      status: 200,
      body:
        form.get('NextToken') === 'page-2'
          ? page(member(CONFIRMED.subscriptionArn, 'email', 'b@example.com'))
          : page(member(PENDING_CONFIRMATION, 'email', 'a@example.com'), 'page-2'),
    }));
    try {
      const subscriptions = await snsSubscriptionLister(client)(TOPIC);
      expect(subscriptions).toEqual([PENDING, CONFIRMED]);
      expect(forms.map((form) => [form.get('Action'), form.get('TopicArn'), form.get('NextToken')])).toEqual([
        ['ListSubscriptionsByTopic', TOPIC, null],
        ['ListSubscriptionsByTopic', TOPIC, 'page-2'],
      ]);
      expect(JSON.stringify(subscriptions)).not.toContain('@example.com');
    } finally {
      await close();
    }
  });

  it("fails a stage that must page, naming SNS's error, when SNS refuses the listing", async () => {
    const { client, close } = await standIn(() => ({
      status: 403,
      body:
        '<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type>' +
        '<Code>AuthorizationError</Code><Message>not authorized</Message></Error><RequestId>r-2</RequestId></ErrorResponse>',
    }));
    try {
      const failure = await checkAlarmDelivery({
        topicArn: TOPIC,
        onCallTopic: false,
        required: true,
        listSubscriptions: snsSubscriptionLister(client),
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SelfCheckFailedError);
      expect((failure as Error).message).toMatch(
        /could not list the subscriptions of the alarm topic .*: AuthorizationError/,
      );
    } finally {
      await close();
    }
  });
});
