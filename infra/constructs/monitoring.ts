import { CfnResource, Duration, Lazy, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import {
  LIST_NEAR_TIMEOUT_SHARE,
  METRIC_NAMES,
  METRICS_NAMESPACE,
  SERVICE_NAME,
  STAGE_DIMENSION,
} from '../../service/metric-names';
import { AUTHORIZER_HANDLER, LIST_INVENTORY_TIMEOUT_SECONDS, ROUTES, type Route } from '../../service/routes';
import type { AlarmConfig } from '../stage-config';
import { type InventoryFunction, pascalCase } from './inventory-function';
import type { InventoryHistory } from './inventory-history';

/**
 * A table's or index's throttles: per direction the largest of DynamoDB's general and per-cause counts, so none is
 * missed or counted twice ("CloudWatch throttling metrics"), each FILLed with 0 (docs/deploying.md, "Observability");
 * at most 7 metrics of an alarm's 10.
 */
function throttleEvents(
  metric: (metricName: string) => IMetric,
  options: { readCap: boolean; label: string; period: Duration },
): MathExpression {
  const causes = (direction: 'Read' | 'Write', capped: boolean) => [
    `${direction}ThrottleEvents`,
    ...(capped ? [`${direction}MaxOnDemandThroughputThrottleEvents`] : []),
    `${direction}KeyRangeThroughputThrottleEvents`,
    `${direction}AccountLimitThrottleEvents`,
  ];
  // No table caps its writes, so writes have no on-demand maximum to count.
  const directions = [causes('Read', options.readCap), causes('Write', false)];
  const usingMetrics: Record<string, IMetric> = {};
  const terms = directions.map((names) => {
    const ids = names.map((metricName) => {
      const id = metricName.replace(/ThrottleEvents$/, '').replace(/^./, (c) => c.toLowerCase());
      usingMetrics[id] = metric(metricName);
      return `FILL(${id}, 0)`;
    });
    return `MAX([${ids.join(', ')}])`;
  });
  return new MathExpression({
    expression: terms.join(' + '),
    usingMetrics,
    label: options.label,
    period: options.period,
  });
}

interface MonitoredTable {
  table: Table;
  /** The table's `maxReadRequestUnits`; none (an uncapped table): no read-capacity alarm. */
  maxReadRequestUnits?: number;
}

/** Properties of {@link Monitoring}. */
export interface MonitoringProps {
  /** The stage name (`staging`, `production`): the `stage` dimension of the functions' metrics. */
  stageName: string;
  /** The API's deployment stage (metrics by ApiName and Stage); its methods are those of ROUTES. */
  stage: Stage;
  /** Every function behind the API, by name: each route's by operationId, then the authorizer and the history. */
  functions: ReadonlyMap<string, InventoryFunction>;
  /** The history: its on-failure queue is watched. */
  history: InventoryHistory;
  /** How far behind the inventory table's stream the history may fall before an alarm. */
  historyLagAlarm: Duration;
  /** Every table by a readable name. */
  tables: ReadonlyMap<string, MonitoredTable>;
  /** The list's index (its own read cap): read units against the cap and throttles, alarmed as a table's. */
  listIndex: MonitoredTable & { indexName: string; maxReadRequestUnits: number };
  alarms: AlarmConfig;
  /** What happens to the topic's key when the stack is deleted. */
  keyRemovalPolicy: RemovalPolicy;
}

/** Operations this service (functions and operator CLI) runs against its tables. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.SCAN,
  Operation.QUERY,
  Operation.BATCH_WRITE_ITEM,
];

interface Evaluation {
  evaluationPeriods: number;
  datapointsToAlarm: number;
}

/**
 * How late a data point may reach CloudWatch after the moment it is stamped, chosen: three minutes. AWS publishes no
 * bound; Lambda sends its metrics in 1-minute intervals when an invocation ends ("Using CloudWatch metrics with
 * Lambda"), and the alarm evaluates on its own tick after that.
 */
export const METRIC_PUBLISHING_DELAY = Duration.minutes(3);

/** Throttle alarms' period on every stage: a lone throttle pages, and clears within minutes. */
const THROTTLE_PERIOD = Duration.minutes(1);

/** An event alarm that still holds a data point arriving `late` after its stamp: the periods that span it, and one. */
function reachingBack(late: Duration, period: Duration): Evaluation {
  return { evaluationPeriods: Math.ceil(late.toSeconds() / period.toSeconds()) + 1, datapointsToAlarm: 1 };
}

/**
 * An event alarm on a function's Lambda `Errors` or `Duration`: stamped at an invocation's start and sent at its end
 * ("Working with Lambda function metrics"), so it reaches back past the timeout and the publishing delay.
 */
export function lambdaEventEvaluation(fn: InventoryFunction, period: Duration): Evaluation {
  const timeout = fn.timeout?.toSeconds() ?? 0;
  return reachingBack(Duration.seconds(timeout + METRIC_PUBLISHING_DELAY.toSeconds()), period);
}

interface AlarmSpec {
  metric: IMetric;
  threshold: number;
  /** What happened, in a sentence; the runbook reference is appended. */
  description: string;
  /** Its section under "Alarm runbooks" in docs/deploying.md. @default the alarm's construct ID */
  runbook?: string;
  /** @default the stage's M of N periods ({@link AlarmConfig}) */
  evaluation?: Evaluation;
}

/**
 * The stage's alarms, into one KMS-encrypted topic, and its dashboard (docs/deploying.md, "Observability" and "Alarm
 * runbooks"). Each alarm is created here, so its `Monitoring<Name>` logical ID, which names it, stays.
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  private readonly alarms: Alarm[] = [];
  /** The authorizer could not check keys (clients get 503). */
  readonly authorizerUnavailableAlarm: Alarm;
  private readonly actions: SnsAction[];
  private readonly config: AlarmConfig;
  private readonly period: Duration;
  /**
   * Events that should never happen alarm on the first point of one, however late it comes: an M-of-N alarm would
   * never page on a lone event ("Evaluating an alarm"; docs/deploying.md, "Observability").
   */
  private readonly once: Evaluation;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: MonitoringProps,
  ) {
    super(scope, id);
    this.config = props.alarms;
    this.period = props.alarms.period;
    this.once = reachingBack(METRIC_PUBLISHING_DELAY, this.period);
    this.topic = alarmTopic(this, props);
    this.actions = [new SnsAction(this.topic)];
    if (props.alarms.topicArn)
      this.actions.push(new SnsAction(Topic.fromTopicArn(this, 'OnCallTopic', props.alarms.topicArn)));

    const api = this.watchApi();
    const keysAndLists = this.watchKeysAndLists();
    const functions = [...props.functions].map(([name, fn]) => this.watchFunction(name, fn));
    const history = this.watchHistory();
    const tables = [...props.tables].map(([name, table]) => this.watchTable(name, table));
    tables.push(this.watchListIndex());
    this.authorizerUnavailableAlarm = keysAndLists.authorizerUnavailableAlarm;
    new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
      widgets: [
        [new TextWidget({ markdown: `# Pet store inventory (${props.stageName})`, width: 24, height: 1 })],
        [new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 })],
        api,
        keysAndLists.widgets,
        history,
        // A row wraps at the dashboard's width: two widgets to a line.
        functions,
        tables,
      ],
    });
  }

  /** An alarm into the topic(s), at or above its threshold, quiet while its metric is missing. */
  private alarm(id: string, spec: AlarmSpec): Alarm {
    const evaluation = spec.evaluation ?? this.config;
    const alarm = new Alarm(this, id, {
      metric: spec.metric,
      threshold: spec.threshold,
      evaluationPeriods: evaluation.evaluationPeriods,
      datapointsToAlarm: evaluation.datapointsToAlarm,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `${spec.description}. Runbook: docs/deploying.md, "Alarm runbooks", ${spec.runbook ?? id}.`,
    });
    for (const action of this.actions) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    this.alarms.push(alarm);
    return alarm;
  }

  /** One of the functions' own metrics (service/metric-names.ts), of this stage. */
  private custom(metricName: string, statistic: string, label = metricName): Metric {
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { service: SERVICE_NAME, [STAGE_DIMENSION]: this.props.stageName },
      statistic,
      period: this.period,
      label,
    });
  }

  /** One method's API Gateway metric (the stage's metrics with the Method and Resource dimensions). */
  private methodMetric(route: Pick<Route, 'method' | 'path'>, metricName: string, statistic: string): Metric {
    const { stage } = this.props;
    return new Metric({
      namespace: 'AWS/ApiGateway',
      metricName,
      dimensionsMap: {
        ApiName: stage.restApi.restApiName,
        Method: route.method,
        Resource: route.path,
        Stage: stage.stageName,
      },
      statistic,
      period: this.period,
    });
  }

  /** `value` in periods with at least `minRequests` requests (the expression's `requests`), else 0. */
  private guarded(value: string): string {
    return `IF(FILL(requests, 0) >= ${this.config.minRequests}, ${value}, 0)`;
  }

  /**
   * What a client notices: 5xx and fault rates without the designed 501s, and each buffered route's p99 latency (a
   * streamed route's runs to its last byte: ListInventoryNearTimeoutAlarm watches it).
   */
  private watchApi(): GraphWidget[] {
    const { config, period } = this;
    const { stage } = this.props;
    const requests = stage.metricCount({ statistic: 'Sum', period });
    const serverErrors = stage.metricServerError({ period });
    const notImplemented = Object.fromEntries(
      ROUTES.filter((route) => route.notImplemented).map((route, index) => [
        `ni${index}`,
        this.methodMetric(route, '5XXError', 'Sum'),
      ]),
    );
    const designed501s = Object.keys(notImplemented)
      .map((name) => ` - FILL(${name}, 0)`)
      .join('');
    const serverErrorRate = new MathExpression({
      expression: this.guarded(`(FILL(errors, 0)${designed501s}) / FILL(requests, 0)`),
      usingMetrics: { requests, errors: serverErrors, ...notImplemented },
      label: 'API 5xx per request, without the designed 501s',
      period,
    });
    this.alarm('ApiServerErrorRateAlarm', {
      metric: serverErrorRate,
      threshold: config.serverErrorRate,
      description: `At least ${config.serverErrorRate * 100} % of API requests answered 5xx, the designed 501s left out`,
    });
    const faults = new MathExpression({
      expression: this.guarded('(FILL(internal, 0) + FILL(unavailable, 0)) / FILL(requests, 0)'),
      usingMetrics: {
        requests,
        internal: this.custom(METRIC_NAMES.internalError, 'Sum'),
        unavailable: this.custom(METRIC_NAMES.storageUnavailable, 'Sum'),
      },
      label: 'Function faults (500 + 503) per request',
      period,
    });
    this.alarm('FunctionFaultRateAlarm', {
      metric: faults,
      threshold: config.serverErrorRate,
      description: `At least ${config.serverErrorRate * 100} % of requests failed in the functions (InternalError + StorageUnavailable)`,
    });
    const latencyRoutes = ROUTES.filter((route) => !route.streaming);
    for (const route of latencyRoutes) this.routeLatencyAlarm(route);
    const nearTimeout = this.watchListNearTimeout();
    return [
      new GraphWidget({
        title: 'API requests and errors',
        left: [requests, stage.metricClientError({ period }), serverErrors],
        right: [serverErrorRate, faults],
        width: 12,
      }),
      new GraphWidget({
        title: 'API latency',
        left: [
          stage.metricLatency({ statistic: 'p50', period }),
          stage.metricLatency({ statistic: 'p99', period }),
          stage.metricIntegrationLatency({ statistic: 'p99', period }),
          ...latencyRoutes.map((route) => this.methodMetric(route, 'Latency', 'p99')),
        ],
        right: [nearTimeout],
        width: 12,
      }),
    ];
  }

  /** A buffered route's p99 latency, in periods with enough of its own requests. */
  private routeLatencyAlarm(route: Route): void {
    const { p99LatencyMs } = this.config;
    const latency = new MathExpression({
      expression: this.guarded('FILL(latency, 0)'),
      usingMetrics: {
        requests: this.methodMetric(route, 'Count', 'Sum'),
        latency: this.methodMetric(route, 'Latency', 'p99'),
      },
      label: `${route.method} ${route.path} p99 latency (ms)`,
      period: this.period,
    });
    this.alarm(`${pascalCase(route.operationId)}LatencyAlarm`, {
      metric: latency,
      threshold: p99LatencyMs,
      description: `${route.method} ${route.path}: p99 latency reached ${p99LatencyMs} ms`,
      runbook: '<Route>LatencyAlarm',
    });
  }

  /** Lists still running at their share of the function's timeout, counted by the list the moment it passes it. */
  private watchListNearTimeout(): IMetric {
    const timeout = Duration.seconds(LIST_INVENTORY_TIMEOUT_SECONDS);
    const nearTimeout = this.custom(
      METRIC_NAMES.inventoryListNearTimeout,
      'Sum',
      'GET /inventory: lists near time-out',
    );
    this.alarm('ListInventoryNearTimeoutAlarm', {
      metric: nearTimeout,
      threshold: 1,
      description:
        `A GET /inventory is still running after ${LIST_NEAR_TIMEOUT_SHARE * 100} % of its ${timeout.toHumanString()} ` +
        'timeout: lists are nearing the point where they are cut off',
      evaluation: this.once,
    });
    return nearTimeout;
  }

  /** Key checks that could not run, and the largest list answered. */
  private watchKeysAndLists() {
    const authorizerUnavailable = this.custom(METRIC_NAMES.authorizerUnavailable, 'Sum');
    const authorizerUnavailableAlarm = this.alarm('AuthorizerUnavailableAlarm', {
      metric: authorizerUnavailable,
      threshold: 1,
      description: 'The authorizer could not check API keys (keys table failing): clients get 503',
      evaluation: this.once,
    });
    const { listedEntries } = this.config;
    const listed = this.custom(METRIC_NAMES.inventoryEntriesListed, 'Maximum', 'Largest list answered (entries)');
    this.alarm('InventoryListSizeAlarm', {
      metric: listed,
      threshold: listedEntries,
      description: `A list answered ${listedEntries} entries or more: it nears the largest list the stage can answer`,
      evaluation: this.once,
    });
    const widgets = [
      new GraphWidget({
        title: 'Authorizer decisions',
        left: [
          this.custom(METRIC_NAMES.apiKeyAccepted, 'Sum'),
          this.custom(METRIC_NAMES.apiKeyRefused, 'Sum'),
          authorizerUnavailable,
        ],
        width: 12,
      }),
      new GraphWidget({ title: 'Largest list answered', left: [listed], width: 12 }),
    ];
    return { authorizerUnavailableAlarm, widgets };
  }

  /**
   * A function's throttles (stamped when refused, so only published late), and its crashes unless it is the
   * authorizer's (a refused key is a thrown error).
   */
  private watchFunction(name: string, fn: InventoryFunction): GraphWidget {
    const { period } = this;
    const pascal = pascalCase(name);
    const errors = fn.metricErrors({ period });
    const throttles = fn.metricThrottles({ period: THROTTLE_PERIOD });
    if (name !== AUTHORIZER_HANDLER)
      this.alarm(`${pascal}ErrorsAlarm`, {
        metric: errors,
        threshold: 1,
        description: `The ${name} function crashed or timed out`,
        runbook: '<Function>ErrorsAlarm',
        evaluation: lambdaEventEvaluation(fn, period),
      });
    this.alarm(`${pascal}ThrottlesAlarm`, {
      metric: throttles,
      threshold: 1,
      description: `The ${name} function was throttled`,
      runbook: '<Function>ThrottlesAlarm',
      evaluation: reachingBack(METRIC_PUBLISHING_DELAY, THROTTLE_PERIOD),
    });
    return new GraphWidget({
      title: `${name}: invocations, errors, throttles`,
      left: [fn.metricInvocations({ period }), errors, throttles],
      right: [fn.metricDuration({ statistic: 'p99', period })],
      width: 12,
    });
  }

  /** How far behind the inventory table's stream the history is, and the batches it gave up on. */
  private watchHistory(): GraphWidget[] {
    const { history, historyLagAlarm } = this.props;
    const { period } = this;
    const iteratorAge = history.function.metric('IteratorAge', {
      statistic: 'Maximum',
      period,
      label: 'History: age of the last stream record read (ms)',
    });
    this.alarm('HistoryIteratorAgeAlarm', {
      metric: iteratorAge,
      threshold: historyLagAlarm.toMilliseconds(),
      description: `The history is ${historyLagAlarm.toHumanString()} or more behind the inventory table's stream`,
    });
    const failedRecords = history.failedRecords.metricApproximateNumberOfMessagesVisible({
      period,
      label: 'History: batches given up on (on-failure queue)',
    });
    this.alarm('HistoryFailedRecordsAlarm', {
      metric: failedRecords,
      threshold: 1,
      description:
        'The history gave up on stream records (its on-failure queue has messages): those changes are not on record',
      evaluation: this.once,
    });
    return [
      new GraphWidget({
        title: 'History: stream lag and records given up on',
        left: [iteratorAge],
        right: [failedRecords],
        width: 12,
      }),
      new GraphWidget({
        title: 'History: changes recorded, records failed',
        left: [
          this.custom(METRIC_NAMES.historyEntriesRecorded, 'Sum'),
          this.custom(METRIC_NAMES.historyRecordsFailed, 'Sum'),
        ],
        width: 12,
      }),
    ];
  }

  /** A table's throttles, system errors and, for a capped table, read units against its cap. */
  private watchTable(name: string, { table, maxReadRequestUnits }: MonitoredTable): GraphWidget {
    const { config, period } = this;
    const pascal = pascalCase(name);
    const throttles = throttleEvents((metricName) => table.metric(metricName, { statistic: 'Sum', period }), {
      readCap: maxReadRequestUnits !== undefined,
      label: `${name} throttle events`,
      period,
    });
    const systemErrors = new MathExpression({
      expression: TABLE_OPERATIONS.map((_, index) => `FILL(op${index}, 0)`).join(' + '),
      usingMetrics: Object.fromEntries(
        TABLE_OPERATIONS.map((operation, index) => [
          `op${index}`,
          table.metric('SystemErrors', {
            dimensionsMap: { TableName: table.tableName, Operation: operation },
            statistic: 'Sum',
            period,
          }),
        ]),
      ),
      label: `${name} system errors`,
      period,
    });
    const readUnitsPerSecond = readUnitsPerSecondOf(
      table.metricConsumedReadCapacityUnits({ period }),
      `${name} read units per second${maxReadRequestUnits === undefined ? '' : ` (cap ${maxReadRequestUnits})`}`,
      period,
    );
    this.alarm(`${pascal}TableThrottlesAlarm`, {
      metric: throttles,
      threshold: 1,
      description: `Requests to the ${name} table were throttled`,
      runbook: '<Table>TableThrottlesAlarm',
    });
    this.alarm(`${pascal}TableSystemErrorsAlarm`, {
      metric: systemErrors,
      threshold: 1,
      description: `The ${name} table answered with system errors`,
      runbook: '<Table>TableSystemErrorsAlarm',
    });
    if (maxReadRequestUnits !== undefined)
      this.alarm(`${pascal}TableReadCapacityAlarm`, {
        metric: readUnitsPerSecond,
        threshold: Math.round(maxReadRequestUnits * config.readCapacityShare),
        description: `The ${name} table read ${config.readCapacityShare * 100} % of its cap of ${maxReadRequestUnits} units/s`,
        runbook: '<Table>TableReadCapacityAlarm',
      });
    return new GraphWidget({
      title: `${name} table`,
      left: [throttles, systemErrors],
      right: [readUnitsPerSecond],
      width: 12,
    });
  }

  /** The list index's read units against its own cap, and its throttles, alarmed as a table's. */
  private watchListIndex(): GraphWidget {
    const { config, period } = this;
    const { table, indexName, maxReadRequestUnits } = this.props.listIndex;
    const indexMetric = (metricName: string) =>
      table.metric(metricName, {
        dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
        statistic: 'Sum',
        period,
      });
    const readUnitsPerSecond = readUnitsPerSecondOf(
      indexMetric('ConsumedReadCapacityUnits'),
      `list index read units per second (cap ${maxReadRequestUnits})`,
      period,
    );
    // Its writes too: DynamoDB counts an index's throttled writes (which throttle the table's write) under the
    // index's own dimensions, not the table's.
    const throttles = throttleEvents(indexMetric, { readCap: true, label: 'list index throttle events', period });
    this.alarm('InventoryListIndexReadCapacityAlarm', {
      metric: readUnitsPerSecond,
      threshold: Math.round(maxReadRequestUnits * config.readCapacityShare),
      description: `The list index read ${config.readCapacityShare * 100} % of its cap of ${maxReadRequestUnits} units/s`,
      runbook: '<Table>TableReadCapacityAlarm',
    });
    this.alarm('InventoryListIndexThrottlesAlarm', {
      metric: throttles,
      threshold: 1,
      description:
        'The list index was throttled (lists beyond its read cap, or writes beyond a partition or account limit)',
      runbook: '<Table>TableThrottlesAlarm',
    });
    return new GraphWidget({ title: 'list index', left: [throttles], right: [readUnitsPerSecond], width: 12 });
  }
}

/**
 * The topic every alarm notifies, encrypted with a customer managed key (the AWS managed aws/sns key does not let
 * CloudWatch publish to the topic), with the configured e-mail subscribed.
 */
function alarmTopic(scope: Construct, props: MonitoringProps): Topic {
  const account = Stack.of(scope).account;
  const key = new Key(scope, 'AlarmTopicKey', {
    description: 'Encrypts the pet store inventory alarm topic',
    enableKeyRotation: true,
    removalPolicy: props.keyRemovalPolicy,
  });
  // As https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services writes it.
  key.addToResourcePolicy(
    new PolicyStatement({
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
    }),
  );
  const topic = new Topic(scope, 'AlarmTopic', { masterKey: key, enforceSSL: true });
  // A topic policy replaces SNS's default one, so nothing may publish unless it says so: CloudWatch, for this
  // stage's own alarms only (their CloudFormation-generated ARNs, read once every alarm of the stack exists).
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowThisStageAlarmsToPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': account },
        ArnEquals: { 'aws:SourceArn': Lazy.list({ produce: () => stackAlarmArns(Stack.of(scope)) }) },
      },
    }),
  );
  if (props.alarms.email) topic.addSubscription(new EmailSubscription(props.alarms.email));
  return topic;
}

/** Consumed read units per second, from their sum per period. */
function readUnitsPerSecondOf(consumed: IMetric, label: string, period: Duration): MathExpression {
  return new MathExpression({
    expression: 'FILL(consumed, 0) / PERIOD(consumed)',
    usingMetrics: { consumed },
    label,
    period,
  });
}

/** The ARN of every CloudWatch alarm of the stack, in construct order. */
function stackAlarmArns(stack: Stack): string[] {
  return stack.node
    .findAll()
    .filter((construct): construct is CfnResource => CfnResource.isCfnResource(construct))
    .filter((resource) => resource.cfnResourceType === 'AWS::CloudWatch::Alarm')
    .map((alarm) => alarm.getAtt('Arn').toString());
}
