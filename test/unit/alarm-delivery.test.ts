import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { SNSClient } from '@aws-sdk/client-sns';
import { ENV } from '../../functions/config';
import { stackRollingBack } from '../../functions/deploy/stack-status';
import { selfCheckDepsFromEnvironment } from '../../functions/handlers/self-check';
import {
  type AlarmDeliveryOptions,
  type AlarmSubscription,
  checkAlarmDelivery,
  PENDING_CONFIRMATION,
  snsSubscriptionLister,
} from '../../functions/self-check/alarm-delivery';
import { SelfCheckFailedError } from '../../functions/self-check/self-check';
import { type QueryStandIn, queryError, startQueryStandIn } from '../helpers/aws-query-stand-in';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:PetStoreInventory-production-MonitoringAlarmTopic1A2B3C4D';
const STACK_ID =
  'arn:aws:cloudformation:eu-west-1:123456789012:stack/PetStoreInventory-production/1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718';
const CONFIRMED: AlarmSubscription = `${TOPIC}:0b5e7a52-1c3f-4d8e-9a61-2f4b8c9d0e1f`;
const PENDING: AlarmSubscription = PENDING_CONFIRMATION;
const SNS_NS = 'http://sns.amazonaws.com/doc/2010-03-31/';
const CFN_NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

/** Options whose listing answers each call with the next of `answers` (the last one repeats). */
function options(answers: (AlarmSubscription[] | Error)[], overrides: Partial<AlarmDeliveryOptions> = {}) {
  let calls = 0;
  const check: AlarmDeliveryOptions = {
    topicArn: TOPIC,
    onCallTopic: false,
    required: true,
    retryDelayMs: 0,
    listSubscriptions: async () => {
      const answer = answers[Math.min(calls++, answers.length - 1)] as AlarmSubscription[] | Error;
      if (answer instanceof Error) throw answer;
      return answer;
    },
    ...overrides,
  };
  return { check, calls: () => calls };
}

const denied = () => Object.assign(new Error('not authorized'), { name: 'AuthorizationErrorException' });

/**
 * The self-check's reading of SNS: an alarm reaches only confirmed subscriptions; SNS deletes an e-mail subscription
 * left unconfirmed for 48 hours, and an alarm e-mail's unsubscribe link deletes a confirmed one (Amazon SNS
 * Developer Guide, "Deleting an Amazon SNS subscription and topic":
 * https://docs.aws.amazon.com/sns/latest/dg/sns-delete-subscription-topic.html).
 */
describe('Self-check: alarm delivery', () => {
  it('passes with a confirmed subscription, counting those still pending, on the first list', async () => {
    const { check, calls } = options([[CONFIRMED, PENDING]]);
    await expect(checkAlarmDelivery(check)).resolves.toEqual({ confirmed: 1, pending: 1 });
    expect(calls()).toBe(1);
  });

  it('passes with no subscription of its own when the alarms also reach a configured on-call topic', async () => {
    const { check } = options([[]], { onCallTopic: true });
    await expect(checkAlarmDelivery(check)).resolves.toEqual({ confirmed: 0, pending: 0 });
  });

  it("passes with a warning while the only subscription awaits confirmation (a first deploy's e-mail)", async () => {
    const result = await checkAlarmDelivery(options([[PENDING]]).check);
    expect(result).toMatchObject({ confirmed: 0, pending: 1 });
    expect(result.warning).toMatch(/reach no one until the subscription e-mail .* is confirmed/);
    expect(result.warning).toMatch(/48 hours/);
  });

  it('fails a stage that must page when its topic has no subscription after 3 lists, giving the command with its ARN', async () => {
    const { check, calls } = options([[]]);
    const failure = await checkAlarmDelivery(check).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SelfCheckFailedError);
    expect((failure as Error).message).toMatch(/^Alarm delivery: alarms reach no one: the alarm topic arn:aws:sns:/);
    expect((failure as Error).message).toContain(
      `aws sns subscribe --topic-arn ${TOPIC} --protocol email --notification-endpoint <address>`,
    );
    expect(calls()).toBe(3);
  });

  it('counts only a real ARN as delivered: a subscription SNS lists as Deleted fails like none', async () => {
    const { check } = options([['Deleted']]);
    await expect(checkAlarmDelivery(check)).rejects.toBeInstanceOf(SelfCheckFailedError);
  });

  it('lists again before failing: a subscription or a grant that shows on a later list passes', async () => {
    const { check, calls } = options([[], denied(), [CONFIRMED]]);
    await expect(checkAlarmDelivery(check)).resolves.toEqual({ confirmed: 1, pending: 0 });
    expect(calls()).toBe(3);
  });

  it('fails on what the last list said: an earlier listing error is not given as the cause of "no subscription"', async () => {
    const failure = await checkAlarmDelivery(options([denied(), []]).check).catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(/^Alarm delivery: alarms reach no one: the alarm topic/);
    expect((failure as Error).cause).toBeUndefined();
  });

  it('only warns, after one list, on a stage that need not page', async () => {
    const { check, calls } = options([[]], { required: false });
    expect((await checkAlarmDelivery(check)).warning).toMatch(/^alarms reach no one: the alarm topic/);
    expect(calls()).toBe(1);
  });

  it('fails a stage that must page when the subscriptions cannot be listed, naming the error, and only warns elsewhere', async () => {
    const failure = await checkAlarmDelivery(options([denied()]).check).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SelfCheckFailedError);
    expect((failure as Error).message).toBe(
      `Alarm delivery: could not list the subscriptions of the alarm topic ${TOPIC}: AuthorizationErrorException`,
    );
    const warned = await checkAlarmDelivery(options([denied()], { required: false }).check);
    expect(warned.warning).toMatch(/^could not list the subscriptions/);
  });

  it('only warns while the stack rolls back, which runs the previous self-check again (else UPDATE_ROLLBACK_FAILED)', async () => {
    const { check } = options([[]], { rollingBack: async () => true });
    const result = await checkAlarmDelivery(check);
    expect(result.warning).toMatch(/^alarms reach no one: .*\(not failed: the stack is rolling back\)$/);
  });

  it('fails when the stack status cannot be read: only a status that says so counts as a rollback', async () => {
    const { check } = options([[]], {
      rollingBack: async () => {
        throw denied();
      },
    });
    await expect(checkAlarmDelivery(check)).rejects.toBeInstanceOf(SelfCheckFailedError);
  });
});

/**
 * The SDK path, against stand-ins that answer as the API references show: SNS ListSubscriptionsByTopic
 * (https://docs.aws.amazon.com/sns/latest/api/API_ListSubscriptionsByTopic.html, paged by NextToken) and
 * CloudFormation DescribeStacks (https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_DescribeStacks.html).
 */
describe('Self-check: alarm delivery through the SDK (Query-protocol stand-ins)', () => {
  const member = (arn: string, endpoint: string) =>
    `<member><TopicArn>${TOPIC}</TopicArn><Protocol>email</Protocol><SubscriptionArn>${arn}</SubscriptionArn>` +
    `<Owner>123456789012</Owner><Endpoint>${endpoint}</Endpoint></member>`;
  const subscriptionsPage = (members: string, nextToken?: string) =>
    `<ListSubscriptionsByTopicResponse xmlns="${SNS_NS}"><ListSubscriptionsByTopicResult>` +
    `<Subscriptions>${members}</Subscriptions>${nextToken ? `<NextToken>${nextToken}</NextToken>` : ''}` +
    '</ListSubscriptionsByTopicResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata>' +
    '</ListSubscriptionsByTopicResponse>';
  const stackStatus = (status: string) =>
    `<DescribeStacksResponse xmlns="${CFN_NS}"><DescribeStacksResult><Stacks><member>` +
    `<StackName>PetStoreInventory-production</StackName><StackId>${STACK_ID}</StackId>` +
    `<CreationTime>2026-11-25T10:00:00Z</CreationTime><StackStatus>${status}</StackStatus>` +
    '</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r-2</RequestId></ResponseMetadata>' +
    '</DescribeStacksResponse>';
  const bounds = {
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  };
  let standIns: QueryStandIn[] = [];
  const standIn = async (answer: Parameters<typeof startQueryStandIn>[0]) => {
    const started = await startQueryStandIn(answer);
    standIns.push(started);
    return started;
  };
  afterEach(async () => {
    await Promise.all(standIns.map((s) => s.close()));
    standIns = [];
  });

  it('reads every page, each subscription as its ARN (PendingConfirmation until confirmed), never the address', async () => {
    const sns = await standIn((form) => ({
      status: 200,
      body:
        form.get('NextToken') === 'page-2'
          ? subscriptionsPage(member(CONFIRMED, 'b@example.com'))
          : subscriptionsPage(member(PENDING_CONFIRMATION, 'a@example.com'), 'page-2'),
    }));
    const subscriptions = await snsSubscriptionLister(new SNSClient({ ...bounds, endpoint: sns.url }))(TOPIC);
    expect(subscriptions).toEqual([PENDING, CONFIRMED]);
    expect(sns.forms.map((form) => [form.get('Action'), form.get('TopicArn'), form.get('NextToken')])).toEqual([
      ['ListSubscriptionsByTopic', TOPIC, null],
      ['ListSubscriptionsByTopic', TOPIC, 'page-2'],
    ]);
    expect(JSON.stringify(subscriptions)).not.toContain('@example.com');
  });

  it("names SNS's refusal (AuthorizationError) in the failure", async () => {
    const sns = await standIn(() => ({
      status: 403,
      body: queryError(SNS_NS, 'AuthorizationError', 'not authorized'),
    }));
    const { check } = options([], {
      listSubscriptions: snsSubscriptionLister(new SNSClient({ ...bounds, endpoint: sns.url })),
    });
    const failure = await checkAlarmDelivery(check).catch((error: unknown) => error);
    expect((failure as Error).message).toBe(
      `Alarm delivery: could not list the subscriptions of the alarm topic ${TOPIC}: AuthorizationErrorException`,
    );
  });

  it.each([
    ['UPDATE_ROLLBACK_IN_PROGRESS', true],
    ['ROLLBACK_IN_PROGRESS', true],
    ['UPDATE_IN_PROGRESS', false],
    ['CREATE_IN_PROGRESS', false],
    ['UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS', false],
  ])('reads stack status %s as rolling back: %s', async (status, expected) => {
    const cloudFormation = await standIn(() => ({ status: 200, body: stackStatus(status) }));
    const client = new CloudFormationClient({ ...bounds, endpoint: cloudFormation.url });
    expect(await stackRollingBack(STACK_ID, client)()).toBe(expected);
    expect(cloudFormation.forms.map((form) => [form.get('Action'), form.get('StackName')])).toEqual([
      ['DescribeStacks', STACK_ID],
    ]);
  });

  it('builds the deployed check from the environment the construct sets, SNS and CloudFormation at their endpoints', async () => {
    const sns = await standIn(() => ({ status: 200, body: subscriptionsPage('') }));
    const cloudFormation = await standIn(() => ({ status: 200, body: stackStatus('UPDATE_ROLLBACK_IN_PROGRESS') }));
    const environment: Record<string, string> = {
      [ENV.apiKeysTable]: 'keys',
      [ENV.selfCheckBaseUrl]: 'https://example.test/v1',
      [ENV.alarmTopicArn]: TOPIC,
      [ENV.alarmOnCallTopic]: 'false',
      [ENV.alarmDeliveryRequired]: 'true',
      [ENV.stackId]: STACK_ID,
      AWS_ENDPOINT_URL_SNS: sns.url,
      AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    };
    const saved = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
    Object.assign(process.env, environment);
    try {
      // The stack's status is the self-check's as a whole (the handler hands it to this check).
      const { alarmDelivery, rollingBack } = selfCheckDepsFromEnvironment();
      expect(alarmDelivery).toMatchObject({ topicArn: TOPIC, onCallTopic: false, required: true });
      expect(rollingBack).toBeDefined();
      const result = await checkAlarmDelivery({
        ...(alarmDelivery as AlarmDeliveryOptions),
        ...(rollingBack ? { rollingBack } : {}),
        retryDelayMs: 0,
      });
      expect(result.warning).toMatch(/not failed: the stack is rolling back/);
      expect(sns.forms).toHaveLength(3);
      expect(cloudFormation.forms).toHaveLength(1);
    } finally {
      for (const [name, value] of Object.entries(saved))
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
    }
  });
});
