import { isWebhookSecret } from '../../functions/webhooks/send';
import { WEBHOOK_QUEUE_RETENTION } from '../../infra/constructs/webhooks';
import { parseWebhookSubscribers, STAGES, type StageName } from '../../infra/stage-config';
import { STACK_OUTPUTS, stackName } from '../../service/names';
import { CHANGE_EVENT_DETAIL_TYPE, CHANGE_EVENT_SOURCE, WEBHOOK_RETRY_DELAYS_SECONDS } from '../../service/webhooks';
import { evaluate, type PolicyDocument, type PolicyRequest, ResolvedStack, refersTo } from './policy-evaluation';
import {
  functionEnvironment,
  logicalIdStartingWith,
  type RawResource,
  resourcesOfType,
  synthesizeBeforeAll,
} from './synth';

/** Two subscribers on staging, one on production with an on-call topic, as an operator would declare them. */
const CONTEXT = {
  'staging:webhooks': JSON.stringify([
    { name: 'till', url: 'https://till.example.com/hooks' },
    { name: 'web-shop', url: 'https://shop.example.com/hooks', maxConcurrency: 5 },
  ]),
  'production:webhooks': JSON.stringify([{ name: 'till', url: 'https://till.example.com/hooks' }]),
  'production:alarmTopicArn': 'arn:aws:sns:eu-west-1:000000000000:on-call',
};
const SUBSCRIBERS: Record<StageName, string[]> = { staging: ['Till', 'WebShop'], production: ['Till'] };

const synthesized = synthesizeBeforeAll(CONTEXT);
const HOUR = 3600;

describe.each(STAGES)('Webhooks of the %s stage', (stage) => {
  const template = () => synthesized().templates[stage];
  const resources = () => template().toJSON().Resources as Record<string, RawResource>;
  const id = (type: string, prefix: string) => logicalIdStartingWith(template(), type, prefix);
  const props = (type: string, prefix: string) => resources()[id(type, prefix)]?.Properties ?? {};
  const stack = () => {
    const { account, region } = synthesized().stacks[stage];
    return new ResolvedStack(template(), stackName(stage), account, region);
  };

  it('leaves no unacknowledged cdk-nag finding with subscribers declared', () => {
    const findings = synthesized().validationReport.pluginReports.flatMap((report) => report.violations ?? []);
    expect(findings).toEqual([]);
  });

  it("streams the history table's new rows to the publisher, which reports partial failures into its own queue", () => {
    expect(props('AWS::DynamoDB::Table', 'HistoryTable').StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    const mapping = Object.values(resourcesOfType(template(), 'AWS::Lambda::EventSourceMapping')).find((each) =>
      JSON.stringify(each.EventSourceArn).includes('HistoryTable'),
    );
    expect(mapping).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [id('AWS::SQS::Queue', 'WebhooksFailedRecords'), 'Arn'] } },
      },
    });
    expect(JSON.stringify(mapping?.FunctionName)).toContain('WebhooksPublisherFunctionLiveAlias');
    expect(functionEnvironment(template(), 'WebhooksPublisherFunction')).toMatchObject({
      CHANGE_EVENT_BUS_NAME: { Ref: id('AWS::Events::EventBus', 'WebhooksBus') },
    });
    expect(template().toJSON().Outputs[STACK_OUTPUTS.changeEventBus]).toMatchObject({
      Value: { Ref: id('AWS::Events::EventBus', 'WebhooksBus') },
    });
  });

  it('gives each subscriber a rule on the bus for every change event, into its own encrypted queue', () => {
    for (const name of SUBSCRIBERS[stage]) {
      const queueId = id('AWS::SQS::Queue', `WebhooksSubscriber${name}Queue`);
      expect(props('AWS::Events::Rule', `WebhooksSubscriber${name}Rule`)).toMatchObject({
        EventBusName: { Ref: id('AWS::Events::EventBus', 'WebhooksBus') },
        EventPattern: { source: [CHANGE_EVENT_SOURCE], 'detail-type': [CHANGE_EVENT_DETAIL_TYPE] },
        Targets: [{ Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } }],
      });
      // Who may send to it, over TLS only, is evaluated below.
      expect(resources()[queueId]?.Properties).toMatchObject({ SqsManagedSseEnabled: true });
    }
  });

  it("feeds each deliver function from its queue in batches of 10, at most the subscriber's concurrency", () => {
    const concurrency: Record<string, number> = { Till: 2, WebShop: 5 };
    for (const name of SUBSCRIBERS[stage]) {
      const queueId = id('AWS::SQS::Queue', `WebhooksSubscriber${name}Queue`);
      const mapping = Object.values(resourcesOfType(template(), 'AWS::Lambda::EventSourceMapping')).find((each) =>
        refersTo({ Ref: (each.EventSourceArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt']?.[0] }, queueId),
      );
      expect(mapping).toMatchObject({
        BatchSize: 10,
        ScalingConfig: { MaximumConcurrency: concurrency[name] },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      expect(JSON.stringify(mapping?.FunctionName)).toContain(`WebhooksSubscriber${name}FunctionLiveAlias`);
      expect(functionEnvironment(template(), `WebhooksSubscriber${name}Function`)).toMatchObject({
        WEBHOOK_SECRET_ARN: { Ref: id('AWS::SecretsManager::Secret', `WebhooksSubscriber${name}Secret`) },
        WEBHOOK_QUEUE_URL: { Ref: queueId },
      });
    }
  });

  it('retries a webhook for at least 24 hours within the queue retention, then moves it to a 14-day dead-letter queue', () => {
    for (const name of SUBSCRIBERS[stage]) {
      const queue = props('AWS::SQS::Queue', `WebhooksSubscriber${name}Queue`) as {
        MessageRetentionPeriod: number;
        RedrivePolicy: { maxReceiveCount: number; deadLetterTargetArn: unknown };
      };
      const { maxReceiveCount } = queue.RedrivePolicy;
      // Attempt n fails, its message is hidden for the schedule's n-th delay: the last attempt comes after all but
      // the last failure's delay, which is 0 (the message then goes to the dead-letter queue at once).
      const delays = Array.from({ length: maxReceiveCount }, (_, n) => WEBHOOK_RETRY_DELAYS_SECONDS[n] ?? 0);
      const lastAttemptAfter = delays.slice(0, maxReceiveCount - 1).reduce((sum, delay) => sum + delay, 0);
      expect(lastAttemptAfter).toBeGreaterThanOrEqual(24 * HOUR);
      expect(delays.at(-1)).toBe(0);
      expect(Math.max(...delays)).toBeLessThanOrEqual(12 * HOUR);
      expect(queue.MessageRetentionPeriod).toBe(WEBHOOK_QUEUE_RETENTION.toSeconds());
      expect(queue.MessageRetentionPeriod).toBeGreaterThan(lastAttemptAfter + 24 * HOUR);
      expect(queue.RedrivePolicy.deadLetterTargetArn).toEqual({
        'Fn::GetAtt': [id('AWS::SQS::Queue', `WebhooksSubscriber${name}DeadLetters`), 'Arn'],
      });
      expect(props('AWS::SQS::Queue', `WebhooksSubscriber${name}DeadLetters`).MessageRetentionPeriod).toBe(
        14 * 24 * HOUR,
      );
    }
  });

  it('alarms into the alarm topic (and the on-call topic) on any dead letter and any record the publisher gave up', () => {
    const topics = [{ Ref: id('AWS::SNS::Topic', 'MonitoringAlarmTopic') }];
    if (stage === 'production') topics.push(CONTEXT['production:alarmTopicArn'] as never);
    const queues = [
      ['WebhooksPublisherFailedRecordsAlarm', 'WebhooksFailedRecords'],
      ...SUBSCRIBERS[stage].map((name) => [`Webhooks${name}DeadLettersAlarm`, `WebhooksSubscriber${name}DeadLetters`]),
    ];
    for (const [alarm, queue] of queues) {
      expect(props('AWS::CloudWatch::Alarm', alarm as string)).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [
          { Name: 'QueueName', Value: { 'Fn::GetAtt': [id('AWS::SQS::Queue', queue as string), 'QueueName'] } },
        ],
        Threshold: 1,
        EvaluationPeriods: 1,
        DatapointsToAlarm: 1,
        AlarmActions: topics,
        OKActions: topics,
      });
    }
  });

  it('generates each secret as 44 letters and digits: after whsec_, a valid Standard Webhooks secret', () => {
    for (const name of SUBSCRIBERS[stage]) {
      expect(props('AWS::SecretsManager::Secret', `WebhooksSubscriber${name}Secret`).GenerateSecretString).toEqual({
        ExcludePunctuation: true,
        IncludeSpace: false,
        PasswordLength: 44,
      });
      expect(template().toJSON().Outputs[`WebhookSecret${name}`]).toMatchObject({
        Value: { Ref: id('AWS::SecretsManager::Secret', `WebhooksSubscriber${name}Secret`) },
      });
    }
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const generated = Array.from({ length: 44 }, (_, i) => alphabet[(i * 37) % alphabet.length]).join('');
    expect(isWebhookSecret(`whsec_${generated}`)).toBe(true);
  });

  /** A request by the role of a function of the stack, with the role's policies. */
  const asFunction = (functionPrefix: string, action: string, resource: string): PolicyRequest => {
    const s = stack();
    const roleId = s.functionRole(id('AWS::Lambda::Function', functionPrefix));
    return {
      principal: s.getAtt(roleId, 'Arn'),
      action,
      resource,
      resourceAccount: s.account,
      identityPolicies: s.rolePolicies(roleId),
    };
  };

  // Identity policies alone decide within the account; an event bus has no resource policy here
  // (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-identity-based.html).
  it('lets the publisher put events on its own bus and on no other', async () => {
    const s = stack();
    const bus = s.getAtt(id('AWS::Events::EventBus', 'WebhooksBus'), 'Arn');
    expect(await evaluate(asFunction('WebhooksPublisherFunction', 'events:PutEvents', bus))).toBe('Allowed');
    const others = [`arn:aws:events:${s.region}:${s.account}:event-bus/default`, bus.replace(/[^/]+$/, 'another-bus')];
    for (const other of others)
      expect(await evaluate(asFunction('WebhooksPublisherFunction', 'events:PutEvents', other))).toBe(
        'ImplicitlyDenied',
      );
  });

  it("lets a deliver function read its own subscriber's secret and not another's", async () => {
    const s = stack();
    const secret = (name: string) => s.ref(id('AWS::SecretsManager::Secret', `WebhooksSubscriber${name}Secret`));
    const fn = `WebhooksSubscriber${SUBSCRIBERS[stage][0]}Function`;
    expect(
      await evaluate(asFunction(fn, 'secretsmanager:GetSecretValue', secret(SUBSCRIBERS[stage][0] as string))),
    ).toBe('Allowed');
    const other = `arn:aws:secretsmanager:${s.region}:${s.account}:secret:${stackName(stage)}-another-AbC123`;
    const others = stage === 'staging' ? [secret('WebShop'), other] : [other];
    for (const arn of others)
      expect(await evaluate(asFunction(fn, 'secretsmanager:GetSecretValue', arn))).toBe('ImplicitlyDenied');
    expect(
      await evaluate(asFunction(fn, 'secretsmanager:PutSecretValue', secret(SUBSCRIBERS[stage][0] as string))),
    ).toBe('ImplicitlyDenied');
  });

  // EventBridge sends to an SQS target as events.amazonaws.com, allowed by the queue policy for the rule's ARN as
  // aws:SourceArn (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html#eb-sqs-permissions).
  it("lets each subscriber's rule, and no other rule, send to its queue over TLS", async () => {
    const s = stack();
    const send = (name: string, ruleName: string, secure = true) => {
      const queueId = id('AWS::SQS::Queue', `WebhooksSubscriber${name}Queue`);
      const policyId = s
        .idsOfType('AWS::SQS::QueuePolicy')
        .find((each) => ((s.resource(each).Properties?.Queues ?? []) as unknown[]).some((q) => refersTo(q, queueId)));
      return evaluate({
        principal: 'events.amazonaws.com',
        action: 'sqs:SendMessage',
        resource: s.getAtt(queueId, 'Arn'),
        resourceAccount: s.account,
        context: {
          'aws:SourceArn': s.getAtt(id('AWS::Events::Rule', `WebhooksSubscriber${ruleName}Rule`), 'Arn'),
          'aws:SourceAccount': s.account,
          'aws:SecureTransport': String(secure),
        },
        resourcePolicy: s.resolve(s.resource(policyId ?? '').Properties?.PolicyDocument) as PolicyDocument,
      });
    };
    for (const name of SUBSCRIBERS[stage]) {
      expect(await send(name, name)).toBe('Allowed');
      expect(await send(name, name, false)).toBe('ExplicitlyDenied');
    }
    if (stage === 'staging') expect(await send('Till', 'WebShop')).toBe('ImplicitlyDenied');
  });
});

describe('Stage configuration: webhook subscribers', () => {
  const refusal = (raw: string) => {
    try {
      parseWebhookSubscribers(raw, 'staging:webhooks');
      return 'accepted';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('takes names, https URLs and a concurrency, 2 by default', () => {
    expect(parseWebhookSubscribers(undefined, 'staging:webhooks')).toEqual([]);
    expect(
      parseWebhookSubscribers('[{"name":"till","url":"https://till.example.com/h","maxConcurrency":3}]', 'x'),
    ).toEqual([{ name: 'till', url: 'https://till.example.com/h', maxConcurrency: 3 }]);
    expect(parseWebhookSubscribers('[{"name":"web-shop","url":"https://shop.example.com"}]', 'x')[0]).toMatchObject({
      maxConcurrency: 2,
    });
  });

  it('refuses, in one line naming the setting, a plain-HTTP URL, a repeated name, a bad name, concurrency or key', () => {
    const refusals = [
      '[{"name":"till","url":"http://till.example.com/h"}]',
      '[{"name":"till","url":"https://a.example.com"},{"name":"till","url":"https://b.example.com"}]',
      '[{"name":"Till!","url":"https://a.example.com"}]',
      '[{"name":"till","url":"https://a.example.com","maxConcurrency":1}]',
      '[{"name":"till","url":"https://a.example.com","secret":"x"}]',
      '{"name":"till"}',
      'till',
    ].map(refusal);
    expect(refusals).toEqual([
      'staging:webhooks[0].url must be an https URL; got "http://till.example.com/h"',
      'staging:webhooks names the subscriber "till" twice: names must be unique',
      expect.stringMatching(/^staging:webhooks\[0\]\.name must be/),
      expect.stringMatching(/^staging:webhooks\[0\]\.maxConcurrency must be a whole number from 2 to 1000/),
      expect.stringMatching(/^staging:webhooks\[0\] must be .*; unknown: secret$/),
      expect.stringMatching(/^staging:webhooks must be a JSON array/),
      expect.stringMatching(/^staging:webhooks must be a JSON array/),
    ]);
    for (const message of refusals) expect(message).not.toContain('\n');
  });
});
