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
 * The throttle events of a table or index as one series, for its alarm and graph. DynamoDB counts ReadThrottleEvents
 * and WriteThrottleEvents, described as requests beyond provisioned capacity, and, apart, one count per cause: the
 * on-demand maximum a table sets itself (`maxReadRequestUnits`, these tables' read cap), a partition's limit, the
 * account's per-table limit ("CloudWatch throttling metrics",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TroubleshootingThrottling-cloudwatch.html). It does
 * not say whether the general counts include the per-cause ones. The largest of them in each period (per direction,
 * reads plus writes) is exact if they do and a lower bound if they do not: a throttle is never missed (the alarms'
 * threshold is 1) and never counted twice. Each series is filled with 0: DynamoDB sends them only when there are
 * throttles, and an alarm on an AWS/DynamoDB metric keeps its state while it is missing (PutMetricAlarm,
 * TreatMissingData), so after one burst it would stay in ALARM and never page again. At most 7 metrics, within an
 * alarm's 10.
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

/** A table and its read cap. */
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

/** How many periods an alarm looks at, and how many of them must breach. */
interface Evaluation {
  evaluationPeriods: number;
  datapointsToAlarm: number;
}

/**
 * Counts of events that should never happen (a crash, a throttle, a key check that could not run, a list near its
 * time-out) alarm on the first period that has one: a lone event breaches one period, and an M-of-N alarm needs M
 * of them, so it would never page. Rates, latencies and levels alarm when M of N periods breach, so that one slow or
 * failing minute is not an outage ("Evaluating an alarm", CloudWatch user guide). test/infra/alarm-evaluation.ts
 * evaluates both kinds as CloudWatch does.
 */
const ONCE: Evaluation = { evaluationPeriods: 1, datapointsToAlarm: 1 };

/**
 * An event alarm on a function's Lambda metrics: Lambda stamps an invocation's Duration and Errors with its start and
 * sends them at its end ("Working with Lambda function metrics"), so for a function whose timeout is longer than a
 * period the alarm reads back past the timeout to see a point that came that late, and pages on one.
 */
export function lambdaEventEvaluation(fn: InventoryFunction, period: Duration): Evaluation {
  if (!fn.timeout || fn.timeout.toSeconds() <= period.toSeconds()) return ONCE;
  return { evaluationPeriods: Math.ceil(fn.timeout.toSeconds() / period.toSeconds()) + 1, datapointsToAlarm: 1 };
}

/** One alarm of the stage. */
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
 * The stage's alarms, all into one KMS-encrypted SNS topic (plus the configured e-mail and topic), and a dashboard.
 *
 * - What a client notices: API 5xx rate without the designed 501s, each buffered route's p99 latency, and a
 *   streamed list still running near its time-out (its latency runs to the last byte, so a large list is slow by
 *   design).
 * - Our own faults: the functions' InternalError + StorageUnavailable per request; route function crashes (Lambda
 *   `Errors`; the handlers turn every thrown error into a response, so an `Errors` is a crash or timeout); the
 *   authorizer's AuthorizerUnavailable (never its `Errors`: a refused key is a thrown `Unauthorized`).
 * - Limits ahead: the largest list answered, each table's read units against its cap, throttles, system errors.
 * - The history: its function's crashes, how far behind the inventory table's stream it is (`IteratorAge`), and
 *   any batch of stream records it gave up on (a message in its on-failure queue).
 *
 * The rate and latency alarms only count periods with at least `minRequests` requests. Every operand of a math
 * alarm that CloudWatch may leave empty (a metric with no data point in a period) is `FILL`ed with 0, so a sum of
 * sparse metrics still has a value. These alarms page; deploys roll back on each new version's own alarms
 * (InventoryRollout). Each alarm is created in this construct, so it keeps its `Monitoring<Name>` logical ID, which
 * names the alarm.
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  private readonly alarms: Alarm[] = [];
  /** The authorizer could not check keys (clients get 503). */
  readonly authorizerUnavailableAlarm: Alarm;
  private readonly actions: SnsAction[];
  private readonly config: AlarmConfig;
  private readonly period: Duration;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: MonitoringProps,
  ) {
    super(scope, id);
    this.config = props.alarms;
    this.period = props.alarms.period;
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
   * What a client notices: 5xx and fault rates, and each buffered route's p99 latency (API Gateway's per-method
   * metrics, which the stage's `metricsEnabled` turns on). A streamed route's latency runs to its last byte, so it
   * is watched by its budget (ListInventoryNearTimeoutAlarm). The 501 routes' 5xx are left out: they answer so by
   * design.
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
      evaluation: ONCE,
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
      evaluation: ONCE,
    });
    const { listedEntries } = this.config;
    const listed = this.custom(METRIC_NAMES.inventoryEntriesListed, 'Maximum', 'Largest list answered (entries)');
    this.alarm('InventoryListSizeAlarm', {
      metric: listed,
      threshold: listedEntries,
      description: `A list answered ${listedEntries} entries or more: it nears the largest list the stage can answer`,
      evaluation: ONCE,
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

  /** A function's throttles, and its crashes unless it is the authorizer's (a refused key is a thrown error). */
  private watchFunction(name: string, fn: InventoryFunction): GraphWidget {
    const { period } = this;
    const pascal = pascalCase(name);
    const errors = fn.metricErrors({ period });
    const throttles = fn.metricThrottles({ period });
    const evaluation = lambdaEventEvaluation(fn, period);
    if (name !== AUTHORIZER_HANDLER)
      this.alarm(`${pascal}ErrorsAlarm`, {
        metric: errors,
        threshold: 1,
        description: `The ${name} function crashed or timed out`,
        runbook: '<Function>ErrorsAlarm',
        evaluation,
      });
    this.alarm(`${pascal}ThrottlesAlarm`, {
      metric: throttles,
      threshold: 1,
      description: `The ${name} function was throttled`,
      runbook: '<Function>ThrottlesAlarm',
      evaluation,
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
      evaluation: ONCE,
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
