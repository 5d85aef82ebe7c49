import { CfnResource, Duration, Lazy, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
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
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC_NAMES, METRICS_NAMESPACE, SERVICE_NAME, STAGE_DIMENSION } from '../../service/metric-names';
import type { Route } from '../../service/routes';
import type { AlarmConfig } from '../stage-config';

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
export interface MonitoredTable {
  table: Table;
  /** The table's `maxReadRequestUnits`; none (an uncapped table): no read-capacity alarm. */
  maxReadRequestUnits?: number;
}

/** Properties of {@link Monitoring}. */
export interface MonitoringProps {
  /** The stage name (`staging`, `production`): the `stage` dimension of the functions' metrics. */
  stageName: string;
  /** The API's deployment stage (metrics by ApiName and Stage). */
  stage: Stage;
  /** The routes that answer 501 by design: their 5xx are left out of the API error alarm. */
  notImplementedRoutes: readonly Pick<Route, 'method' | 'path'>[];
  /**
   * The buffered routes, each watched by its own latency alarm (API Gateway's per-method metrics, which the stage's
   * `metricsEnabled` turns on). A streamed route's latency runs to its last byte, so it is watched by its budget.
   */
  latencyRoutes: readonly Pick<Route, 'operationId' | 'method' | 'path'>[];
  /** The streamed list's function and its timeout: its duration is alarmed against that budget. */
  list: { function: IFunction; timeout: Duration };
  /** Every route function by operationId. */
  routeFunctions: ReadonlyMap<string, IFunction>;
  /** The TOKEN authorizer's function. */
  authorizerFunction: IFunction;
  /** The history function, its on-failure queue, and how far behind the stream it may fall before an alarm. */
  history: { function: IFunction; failedRecords: IQueue; iteratorAgeAlarm: Duration };
  /** Every table by a readable name. */
  tables: ReadonlyMap<string, MonitoredTable>;
  /** The list's index (its own read cap): read units against the cap and throttles, alarmed as a table's. */
  listIndex?: MonitoredTable & { indexName: string; maxReadRequestUnits: number };
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

/**
 * The stage's alarms, all into one KMS-encrypted SNS topic (plus the configured e-mail and topic), and a dashboard.
 *
 * - What a client notices: API 5xx rate without the designed 501s, each buffered route's p99 latency, and the
 *   streamed list nearing its time budget (its latency runs to the last byte, so a large list is slow by design).
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
 * (InventoryRollout).
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;
  /** API 5xx (without the designed 501s) per request. */
  readonly apiServerErrorRateAlarm: Alarm;
  /** The functions' own faults (500 and 503 answers) per request. */
  readonly functionFaultRateAlarm: Alarm;
  /** The authorizer could not check keys (clients get 503). */
  readonly authorizerUnavailableAlarm: Alarm;
  /** The history function is falling behind the inventory table's stream. */
  readonly historyIteratorAgeAlarm: Alarm;
  /** The history gave up on stream records: changes missing from the history. */
  readonly historyFailedRecordsAlarm: Alarm;
  /** Each route function's crashes (Lambda `Errors`), by operationId, and the history function's as `history`. */
  readonly functionErrorAlarms = new Map<string, Alarm>();
  /** Each buffered route's p99 latency, by operationId. */
  readonly routeLatencyAlarms = new Map<string, Alarm>();
  /** The streamed list's longest run nears its timeout. */
  readonly listDurationAlarm: Alarm;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { alarms: config, stage } = props;
    const period = config.period;

    // A customer managed key: the AWS managed aws/sns key does not let CloudWatch publish to the topic.
    const key = new Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the pet store inventory alarm topic',
      enableKeyRotation: true,
      removalPolicy: props.keyRemovalPolicy,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    this.topic = new Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true });
    // A topic policy replaces SNS's default one, so nothing may publish unless it says so: CloudWatch, for this
    // stage's own alarms only (their CloudFormation-generated ARNs, read once every alarm of the stack exists).
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowThisStageAlarmsToPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnEquals: { 'aws:SourceArn': Lazy.list({ produce: () => stackAlarmArns(Stack.of(this)) }) },
        },
      }),
    );
    if (config.email) this.topic.addSubscription(new EmailSubscription(config.email));
    const actions = [new SnsAction(this.topic)];
    if (config.topicArn) actions.push(new SnsAction(Topic.fromTopicArn(this, 'OnCallTopic', config.topicArn)));

    /** One alarm into the topic(s); `runbook` names its section under "Alarm runbooks" in docs/deploying.md. */
    const add = (
      alarmId: string,
      metric: IMetric,
      threshold: number,
      description: string,
      runbook = alarmId,
      evaluation: { evaluationPeriods: number; datapointsToAlarm: number } = config,
    ) => {
      const alarm = new Alarm(this, alarmId, {
        metric,
        threshold,
        evaluationPeriods: evaluation.evaluationPeriods,
        datapointsToAlarm: evaluation.datapointsToAlarm,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: `${description}. Runbook: docs/deploying.md, "Alarm runbooks", ${runbook}.`,
      });
      for (const action of actions) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
      this.alarms.push(alarm);
      return alarm;
    };
    /*
     * Counts of events that should never happen (a crash, a throttle, a key check that could not run, a list near its
     * time-out) alarm on the first period that has one: a lone event breaches one period, and an M-of-N alarm needs M
     * of them, so it would never page. Rates, latencies and levels alarm when M of N periods breach, so that one slow
     * or failing minute is not an outage ("Evaluating an alarm", CloudWatch user guide). test/infra/alarm-evaluation.ts
     * evaluates both kinds as CloudWatch does.
     */
    const once = { evaluationPeriods: 1, datapointsToAlarm: 1 };
    const custom = (metricName: string, statistic: string, label = metricName) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: SERVICE_NAME, [STAGE_DIMENSION]: props.stageName },
        statistic,
        period,
        label,
      });

    const requests = stage.metricCount({ statistic: 'Sum', period });
    const serverErrors = stage.metricServerError({ statistic: 'Sum', period });
    /** One method's API Gateway metric (the stage's metrics with the Method and Resource dimensions). */
    const methodMetric = (route: Pick<Route, 'method' | 'path'>, metricName: string, statistic: string) =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: {
          ApiName: stage.restApi.restApiName,
          Method: route.method,
          Resource: route.path,
          Stage: stage.stageName,
        },
        statistic,
        period,
      });
    const notImplemented = Object.fromEntries(
      props.notImplementedRoutes.map((route, index) => [`ni${index}`, methodMetric(route, '5XXError', 'Sum')]),
    );
    const guarded = (value: string, requestsId = 'requests') =>
      `IF(FILL(${requestsId}, 0) >= ${config.minRequests}, ${value}, 0)`;
    const designed501s = Object.keys(notImplemented)
      .map((name) => ` - FILL(${name}, 0)`)
      .join('');
    const apiServerErrorRate = new MathExpression({
      expression: guarded(`(FILL(errors, 0)${designed501s}) / FILL(requests, 0)`),
      usingMetrics: { requests, errors: serverErrors, ...notImplemented },
      label: 'API 5xx per request, without the designed 501s',
      period,
    });
    this.apiServerErrorRateAlarm = add(
      'ApiServerErrorRateAlarm',
      apiServerErrorRate,
      config.serverErrorRate,
      `At least ${config.serverErrorRate * 100} % of API requests answered 5xx, the designed 501s left out`,
    );

    const faults = new MathExpression({
      expression: guarded('(FILL(internal, 0) + FILL(unavailable, 0)) / FILL(requests, 0)'),
      usingMetrics: {
        requests,
        internal: custom(METRIC_NAMES.internalError, 'Sum'),
        unavailable: custom(METRIC_NAMES.storageUnavailable, 'Sum'),
      },
      label: 'Function faults (500 + 503) per request',
      period,
    });
    this.functionFaultRateAlarm = add(
      'FunctionFaultRateAlarm',
      faults,
      config.serverErrorRate,
      `At least ${config.serverErrorRate * 100} % of requests failed in the functions (InternalError + StorageUnavailable)`,
    );

    const p99 = stage.metricLatency({ statistic: 'p99', period });
    const routeLatencies: IMetric[] = [];
    for (const route of props.latencyRoutes) {
      const pascal = route.operationId.charAt(0).toUpperCase() + route.operationId.slice(1);
      const latency = new MathExpression({
        expression: guarded('FILL(latency, 0)'),
        usingMetrics: {
          requests: methodMetric(route, 'Count', 'Sum'),
          latency: methodMetric(route, 'Latency', 'p99'),
        },
        label: `${route.method} ${route.path} p99 latency (ms)`,
        period,
      });
      routeLatencies.push(methodMetric(route, 'Latency', 'p99'));
      this.routeLatencyAlarms.set(
        route.operationId,
        add(
          `${pascal}LatencyAlarm`,
          latency,
          config.p99LatencyMs,
          `${route.method} ${route.path}: p99 latency reached ${config.p99LatencyMs} ms`,
          '<Route>LatencyAlarm',
        ),
      );
    }
    const listBudgetMs = Math.round(props.list.timeout.toMilliseconds() * config.listDurationShare);
    const listDuration = props.list.function.metricDuration({
      statistic: 'Maximum',
      period,
      label: 'GET /inventory: longest run (ms)',
    });
    this.listDurationAlarm = add(
      'ListInventoryDurationAlarm',
      listDuration,
      listBudgetMs,
      `A GET /inventory ran ${config.listDurationShare * 100} % of its ${props.list.timeout.toHumanString()} ` +
        'timeout: lists are nearing the point where they are cut off',
      'ListInventoryDurationAlarm',
      once,
    );

    const authorizerUnavailable = custom(METRIC_NAMES.authorizerUnavailable, 'Sum');
    this.authorizerUnavailableAlarm = add(
      'AuthorizerUnavailableAlarm',
      authorizerUnavailable,
      1,
      'The authorizer could not check API keys (keys table failing): clients get 503',
      'AuthorizerUnavailableAlarm',
      once,
    );

    const listed = custom(METRIC_NAMES.inventoryEntriesListed, 'Maximum', 'Largest list answered (entries)');
    add(
      'InventoryListSizeAlarm',
      listed,
      config.listedEntries,
      `A list answered ${config.listedEntries} entries or more: it nears the largest list the stage can answer`,
      'InventoryListSizeAlarm',
      once,
    );

    const functionWidgets: GraphWidget[] = [];
    const watch = (name: string, fn: IFunction, alarmOnErrors: boolean) => {
      const pascal = name.charAt(0).toUpperCase() + name.slice(1);
      const errors = fn.metricErrors({ statistic: 'Sum', period });
      const throttles = fn.metricThrottles({ statistic: 'Sum', period });
      if (alarmOnErrors) {
        this.functionErrorAlarms.set(
          name,
          add(
            `${pascal}ErrorsAlarm`,
            errors,
            config.functionErrors,
            `The ${name} function crashed or timed out`,
            '<Function>ErrorsAlarm',
            once,
          ),
        );
      }
      add(
        `${pascal}ThrottlesAlarm`,
        throttles,
        1,
        `The ${name} function was throttled`,
        '<Function>ThrottlesAlarm',
        once,
      );
      functionWidgets.push(
        new GraphWidget({
          title: `${name}: invocations, errors, throttles`,
          left: [fn.metricInvocations({ statistic: 'Sum', period }), errors, throttles],
          right: [fn.metricDuration({ statistic: 'p99', period })],
          width: 12,
        }),
      );
    };
    for (const [name, fn] of props.routeFunctions) watch(name, fn, true);
    watch('authorizer', props.authorizerFunction, false);
    watch('history', props.history.function, true);

    const iteratorAge = props.history.function.metric('IteratorAge', {
      statistic: 'Maximum',
      period,
      label: 'History: age of the last stream record read (ms)',
    });
    this.historyIteratorAgeAlarm = add(
      'HistoryIteratorAgeAlarm',
      iteratorAge,
      props.history.iteratorAgeAlarm.toMilliseconds(),
      `The history is ${props.history.iteratorAgeAlarm.toHumanString()} or more behind the inventory table's stream`,
    );
    const failedRecords = props.history.failedRecords.metricApproximateNumberOfMessagesVisible({
      statistic: 'Maximum',
      period,
      label: 'History: batches given up on (on-failure queue)',
    });
    this.historyFailedRecordsAlarm = add(
      'HistoryFailedRecordsAlarm',
      failedRecords,
      1,
      'The history gave up on stream records (its on-failure queue has messages): those changes are not on record',
      'HistoryFailedRecordsAlarm',
      once,
    );

    const tableWidgets: GraphWidget[] = [];
    for (const [name, { table, maxReadRequestUnits }] of props.tables) {
      const pascal = name.charAt(0).toUpperCase() + name.slice(1);
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
      const readUnitsPerSecond = new MathExpression({
        expression: 'FILL(consumed, 0) / PERIOD(consumed)',
        usingMetrics: { consumed: table.metricConsumedReadCapacityUnits({ statistic: 'Sum', period }) },
        label: `${name} read units per second${maxReadRequestUnits === undefined ? '' : ` (cap ${maxReadRequestUnits})`}`,
        period,
      });
      add(
        `${pascal}TableThrottlesAlarm`,
        throttles,
        1,
        `Requests to the ${name} table were throttled`,
        '<Table>TableThrottlesAlarm',
      );
      add(
        `${pascal}TableSystemErrorsAlarm`,
        systemErrors,
        1,
        `The ${name} table answered with system errors`,
        '<Table>TableSystemErrorsAlarm',
      );
      if (maxReadRequestUnits !== undefined)
        add(
          `${pascal}TableReadCapacityAlarm`,
          readUnitsPerSecond,
          Math.round(maxReadRequestUnits * config.readCapacityShare),
          `The ${name} table read ${config.readCapacityShare * 100} % of its cap of ${maxReadRequestUnits} units/s`,
          '<Table>TableReadCapacityAlarm',
        );
      tableWidgets.push(
        new GraphWidget({
          title: `${name} table`,
          left: [throttles, systemErrors],
          right: [readUnitsPerSecond],
          width: 12,
        }),
      );
    }

    if (props.listIndex) {
      const { table, indexName, maxReadRequestUnits } = props.listIndex;
      const indexMetric = (metricName: string) =>
        new Metric({
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
          statistic: 'Sum',
          period,
        });
      const indexReadUnitsPerSecond = new MathExpression({
        expression: 'FILL(consumed, 0) / PERIOD(consumed)',
        usingMetrics: { consumed: indexMetric('ConsumedReadCapacityUnits') },
        label: `list index read units per second (cap ${maxReadRequestUnits})`,
        period,
      });
      // Its writes too: DynamoDB counts an index's throttled writes (which throttle the table's write) under the
      // index's own dimensions, not the table's.
      const indexThrottles = throttleEvents(indexMetric, {
        readCap: true,
        label: 'list index throttle events',
        period,
      });
      add(
        'InventoryListIndexReadCapacityAlarm',
        indexReadUnitsPerSecond,
        Math.round(maxReadRequestUnits * config.readCapacityShare),
        `The list index read ${config.readCapacityShare * 100} % of its cap of ${maxReadRequestUnits} units/s`,
        '<Table>TableReadCapacityAlarm',
      );
      add(
        'InventoryListIndexThrottlesAlarm',
        indexThrottles,
        1,
        'The list index was throttled (lists beyond its read cap, or writes beyond a partition or account limit)',
        '<Table>TableThrottlesAlarm',
      );
      tableWidgets.push(
        new GraphWidget({ title: 'list index', left: [indexThrottles], right: [indexReadUnitsPerSecond], width: 12 }),
      );
    }

    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
      widgets: [
        [new TextWidget({ markdown: `# Pet store inventory (${props.stageName})`, width: 24, height: 1 })],
        [new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 })],
        [
          new GraphWidget({
            title: 'API requests and errors',
            left: [requests, stage.metricClientError({ statistic: 'Sum', period }), serverErrors],
            right: [apiServerErrorRate, faults],
            width: 12,
          }),
          new GraphWidget({
            title: 'API latency',
            left: [
              stage.metricLatency({ statistic: 'p50', period }),
              p99,
              stage.metricIntegrationLatency({ statistic: 'p99', period }),
              ...routeLatencies,
            ],
            right: [listDuration],
            width: 12,
          }),
        ],
        [
          new GraphWidget({
            title: 'Authorizer decisions',
            left: [
              custom(METRIC_NAMES.apiKeyAccepted, 'Sum'),
              custom(METRIC_NAMES.apiKeyRefused, 'Sum'),
              authorizerUnavailable,
            ],
            width: 12,
          }),
          new GraphWidget({ title: 'Largest list answered', left: [listed], width: 12 }),
        ],
        [
          new GraphWidget({
            title: 'History: stream lag and records given up on',
            left: [iteratorAge],
            right: [failedRecords],
            width: 12,
          }),
          new GraphWidget({
            title: 'History: changes recorded, records failed',
            left: [
              custom(METRIC_NAMES.historyEntriesRecorded, 'Sum'),
              custom(METRIC_NAMES.historyRecordsFailed, 'Sum'),
            ],
            width: 12,
          }),
        ],
        ...pairs(functionWidgets),
        ...pairs(tableWidgets),
      ],
    });
  }
}

/** The ARN of every CloudWatch alarm of the stack, in construct order. */
function stackAlarmArns(stack: Stack): string[] {
  return stack.node
    .findAll()
    .filter((construct): construct is CfnResource => CfnResource.isCfnResource(construct))
    .filter((resource) => resource.cfnResourceType === 'AWS::CloudWatch::Alarm')
    .map((alarm) => alarm.getAtt('Arn').toString());
}

/** Two widgets per dashboard row. */
function pairs<T>(items: readonly T[]): T[][] {
  const rows: T[][] = [];
  for (let i = 0; i < items.length; i += 2) rows.push(items.slice(i, i + 2));
  return rows;
}
