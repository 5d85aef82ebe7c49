import { CfnOutput, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, type EventPattern, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../functions/config';
import { HISTORY_STREAM_MAPPING, STACK_OUTPUTS } from '../../service/names';
import { CHANGE_EVENT_DETAIL_TYPE, CHANGE_EVENT_SOURCE, WEBHOOK_RETRY_DELAYS_SECONDS } from '../../service/webhooks';
import type { WebhookSubscriber } from '../stage-config';
import { InventoryFunction, pascalCase } from './inventory-function';

/** The rule pattern of every change event on a stage's bus (docs/deploying.md, "Webhooks"). */
export const CHANGE_EVENT_PATTERN: EventPattern = {
  source: [CHANGE_EVENT_SOURCE],
  detailType: [CHANGE_EVENT_DETAIL_TYPE],
};

/** Webhooks one deliver function sends at once; with its maxConcurrency, the most in flight to a subscriber. */
export const WEBHOOK_BATCH_SIZE = 10;
/** The deliver function's time-out: a 5 s attempt, its secret's first read and a visibility change, with room. */
const DELIVER_TIMEOUT = Duration.seconds(15);
/** A webhook's whole life in its queue: every retry of the schedule (29.6 h) with days to spare. */
export const WEBHOOK_QUEUE_RETENTION = Duration.days(4);
/** SQS's longest: a dead letter keeps its first enqueue time, so it still has over 12 days for the operator. */
const DEAD_LETTER_RETENTION = Duration.days(14);

export interface WebhooksProps {
  /** The history table, with its stream (new images): each new row is a change event. */
  historyTable: ITable;
  subscribers: readonly WebhookSubscriber[];
  /** The `stage` dimension of the functions' metrics. */
  stage: string;
  /** Of the queues, secrets and log groups. */
  removalPolicy: RemovalPolicy;
  logRetention: RetentionDays;
}

/**
 * Change events on the stage's event bus, and to each subscriber as signed webhooks (docs/deploying.md, "Webhooks"):
 * the history table's stream → the publisher → the bus → per subscriber a rule → its queue → its deliver function.
 */
export class Webhooks extends Construct {
  readonly bus: EventBus;
  readonly publisher: InventoryFunction;
  /** The shard and sequence numbers of the stream batches the publisher gave up on. */
  readonly failedRecords: Queue;
  readonly subscribers = new Map<string, WebhookDelivery>();
  /** The publisher and each deliver function, by a name for the stack's function map (its alarms and roll-out). */
  readonly functions = new Map<string, InventoryFunction>();

  constructor(
    scope: Construct,
    id: string,
    private readonly props: WebhooksProps,
  ) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', { description: 'Every stock change of the pet store inventory' });
    this.publisher = new InventoryFunction(this, 'PublisherFunction', {
      handler: 'publish-changes',
      description: "Webhooks: puts each change from the history table's stream on the stage's event bus",
      logRetention: props.logRetention,
      logRemovalPolicy: props.removalPolicy,
      wildcardAction: "dynamodb:ListStreams (Lambda's event source mapping reads the stream with it)",
      environment: { [ENV.changeEventBus]: this.bus.eventBusName, [ENV.stage]: props.stage },
    });
    this.bus.grantPutEventsTo(this.publisher);
    this.failedRecords = this.queue(this, 'FailedRecords', {
      retentionPeriod: DEAD_LETTER_RETENTION,
      readBy: "the publisher stream mapping's on-failure destination",
    });
    this.publisher.live.addEventSource(
      new DynamoEventSource(props.historyTable, {
        // TRIM_HORIZON: the first deploy publishes every change the stream still holds.
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: HISTORY_STREAM_MAPPING.batchSize,
        bisectBatchOnError: true,
        retryAttempts: HISTORY_STREAM_MAPPING.retryAttempts,
        maxRecordAge: Duration.seconds(HISTORY_STREAM_MAPPING.maxRecordAgeSeconds),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.failedRecords),
      }),
    );
    new CfnOutput(Stack.of(this), STACK_OUTPUTS.changeEventBus, {
      value: this.bus.eventBusName,
      description: `Event bus of every change (source ${CHANGE_EVENT_SOURCE}, detail-type ${CHANGE_EVENT_DETAIL_TYPE})`,
    });
    this.functions.set('webhooksPublisher', this.publisher);
    for (const subscriber of props.subscribers) {
      const delivery = this.addSubscriber(subscriber);
      this.subscribers.set(subscriber.name, delivery);
      this.functions.set(`webhook${webhookOutputName(subscriber.name)}`, delivery.function);
    }
  }

  /**
   * Alarms, on the first period with a message, into the stage's alarm topic (and the on-call topic, if any) when the
   * publisher gave up on records or a subscriber's webhooks went to its dead-letter queue.
   */
  alarmInto(topic: ITopic, options: { onCallTopicArn?: string; period: Duration }): void {
    const { period } = options;
    const topics = [
      topic,
      ...(options.onCallTopicArn ? [Topic.fromTopicArn(this, 'OnCallTopic', options.onCallTopicArn)] : []),
    ];
    const actions = topics.map((each) => new SnsAction(each));
    const alarm = (id: string, queue: Queue, description: string, runbook = id) => {
      const created = new Alarm(this, id, {
        metric: queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        datapointsToAlarm: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: `${description}. Runbook: docs/deploying.md, "Alarm runbooks", ${runbook}.`,
      });
      for (const action of actions) {
        created.addAlarmAction(action);
        created.addOkAction(action);
      }
    };
    alarm(
      'PublisherFailedRecordsAlarm',
      this.failedRecords,
      'The webhooks publisher gave up on history stream records (its on-failure queue has messages): those changes ' +
        'reached neither the bus nor any subscriber',
    );
    for (const [name, delivery] of this.subscribers)
      alarm(
        `${webhookOutputName(name)}DeadLettersAlarm`,
        delivery.deadLetters,
        `Webhooks to ${name} failed every retry for over a day (its dead-letter queue has messages)`,
        '<Subscriber>DeadLettersAlarm',
      );
  }

  /** A subscriber's secret, rule, queue with its dead-letter queue and alarm, and deliver function. */
  private addSubscriber(subscriber: WebhookSubscriber): WebhookDelivery {
    const { props } = this;
    const scope = new Construct(this, `Subscriber${webhookOutputName(subscriber.name)}`);
    const secret = new Secret(scope, 'Secret', {
      description: `Signs the webhooks to ${subscriber.name}: its receiver's secret is whsec_ and this value`,
      // 44 base64 characters: 33 random bytes, within Standard Webhooks' 24 to 64.
      generateSecretString: { passwordLength: 44, excludePunctuation: true, includeSpace: false },
      removalPolicy: props.removalPolicy,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'A webhook secret is shared with its receiver: rotating it takes both sides at once, so it is rotated by ' +
        'hand (docs/deploying.md, "Webhooks").',
    });
    const deadLetters = this.queue(scope, 'DeadLetters', {
      retentionPeriod: DEAD_LETTER_RETENTION,
      readBy: `the dead-letter queue of ${subscriber.name}'s webhooks`,
    });
    const queue = new Queue(scope, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: WEBHOOK_QUEUE_RETENTION,
      // Lambda's advice for an SQS event source: six times the function's time-out.
      visibilityTimeout: Duration.seconds(6 * DELIVER_TIMEOUT.toSeconds()),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: WEBHOOK_RETRY_DELAYS_SECONDS.length + 1 },
      removalPolicy: props.removalPolicy,
    });
    const rule = new Rule(scope, 'Rule', {
      eventBus: this.bus,
      description: `Every change, to the webhook queue of ${subscriber.name}`,
      eventPattern: CHANGE_EVENT_PATTERN,
      targets: [new SqsQueue(queue)],
    });
    const deliver = new InventoryFunction(scope, 'Function', {
      handler: 'deliver-webhook',
      description: `Webhooks: signs and POSTs each change to ${subscriber.name}`,
      logRetention: props.logRetention,
      logRemovalPolicy: props.removalPolicy,
      timeout: DELIVER_TIMEOUT,
      environment: {
        [ENV.webhookUrl]: subscriber.url,
        [ENV.webhookSecretArn]: secret.secretArn,
        [ENV.webhookQueueUrl]: queue.queueUrl,
        [ENV.stage]: props.stage,
      },
    });
    secret.grantRead(deliver);
    new CfnOutput(Stack.of(this), `WebhookSecret${webhookOutputName(subscriber.name)}`, {
      value: secret.secretArn,
      description: `Signing secret of ${subscriber.name}'s webhooks (its receiver's secret: whsec_ and its value)`,
    });
    deliver.live.addEventSource(
      new SqsEventSource(queue, {
        batchSize: WEBHOOK_BATCH_SIZE,
        maxConcurrency: subscriber.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    return { secret, queue, deadLetters, rule, function: deliver };
  }

  /** An encrypted, TLS-only queue that nothing consumes: an operator reads it when its alarm fires. */
  private queue(scope: Construct, id: string, options: { retentionPeriod: Duration; readBy: string }): Queue {
    const queue = new Queue(scope, id, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: options.retentionPeriod,
      removalPolicy: this.props.removalPolicy,
    });
    Validations.of(queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: `This queue is itself ${options.readBy}, read by an operator (alarmed when not empty): nothing consumes it.`,
    });
    return queue;
  }
}

/** What one subscriber's delivery is made of. */
export interface WebhookDelivery {
  secret: Secret;
  queue: Queue;
  deadLetters: Queue;
  rule: Rule;
  function: InventoryFunction;
}

/** A subscriber's name in construct IDs and outputs: `web-shop` -> `WebShop`. */
export function webhookOutputName(name: string): string {
  return name.split('-').map(pascalCase).join('');
}
