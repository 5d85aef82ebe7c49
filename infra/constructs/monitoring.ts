import { Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
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
import { Construct } from 'constructs';
import type { AlarmConfig } from '../stage-config';

/** Properties of {@link Monitoring}. */
export interface MonitoringProps {
  /** The API's deployment stage (metrics by ApiName and Stage). */
  stage: Stage;
  /** Every function by a readable name (operationId or `authorizer`). */
  functions: ReadonlyMap<string, IFunction>;
  /** Every table by a readable name. */
  tables: ReadonlyMap<string, Table>;
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
 * Alarms on what a client would notice (API 5xx rate, p99 latency), on each function (errors, throttles) and on
 * each table (throttles, system errors), all into one KMS-encrypted SNS topic; and a dashboard of the same.
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

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
    if (config.email) this.topic.addSubscription(new EmailSubscription(config.email));
    const action = new SnsAction(this.topic);

    const add = (alarmId: string, metric: IMetric, threshold: number, description: string) => {
      const alarm = new Alarm(this, alarmId, {
        metric,
        threshold,
        evaluationPeriods: config.evaluationPeriods,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
      this.alarms.push(alarm);
      return alarm;
    };

    // 5XXError is 0 or 1 per request, so its average is the fraction of requests that failed.
    const serverErrorRate = stage.metricServerError({ statistic: 'Average', period });
    add(
      'ApiServerErrorRateAlarm',
      serverErrorRate,
      config.serverErrorRate,
      `More than ${config.serverErrorRate * 100} % of API requests answered 5xx`,
    );
    const p99 = stage.metricLatency({ statistic: 'p99', period });
    add('ApiP99LatencyAlarm', p99, config.p99LatencyMs, `API p99 latency reached ${config.p99LatencyMs} ms`);

    const functionWidgets: GraphWidget[] = [];
    for (const [name, fn] of props.functions) {
      const pascal = name.charAt(0).toUpperCase() + name.slice(1);
      const errors = fn.metricErrors({ statistic: 'Sum', period });
      const throttles = fn.metricThrottles({ statistic: 'Sum', period });
      add(`${pascal}ErrorsAlarm`, errors, config.functionErrors, `The ${name} function failed`);
      add(`${pascal}ThrottlesAlarm`, throttles, 1, `The ${name} function was throttled`);
      functionWidgets.push(
        new GraphWidget({
          title: `${name}: invocations, errors, throttles`,
          left: [fn.metricInvocations({ statistic: 'Sum', period }), errors, throttles],
          right: [fn.metricDuration({ statistic: 'p99', period })],
          width: 12,
        }),
      );
    }

    const tableWidgets: GraphWidget[] = [];
    for (const [name, table] of props.tables) {
      const pascal = name.charAt(0).toUpperCase() + name.slice(1);
      const throttles = new MathExpression({
        expression: 'reads + writes',
        usingMetrics: {
          reads: table.metric('ReadThrottleEvents', { statistic: 'Sum', period }),
          writes: table.metric('WriteThrottleEvents', { statistic: 'Sum', period }),
        },
        label: `${name} throttle events`,
        period,
      });
      const systemErrors = table.metricSystemErrorsForOperations({
        operations: TABLE_OPERATIONS,
        statistic: 'Sum',
        period,
        label: `${name} system errors`,
      });
      add(`${pascal}TableThrottlesAlarm`, throttles, 1, `Requests to the ${name} table were throttled`);
      add(`${pascal}TableSystemErrorsAlarm`, systemErrors, 1, `The ${name} table answered with system errors`);
      tableWidgets.push(new GraphWidget({ title: `${name} table`, left: [throttles, systemErrors], width: 12 }));
    }

    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
      widgets: [
        [new TextWidget({ markdown: '# Pet store inventory', width: 24, height: 1 })],
        [new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 })],
        [
          new GraphWidget({
            title: 'API requests and errors',
            left: [
              stage.metricCount({ statistic: 'Sum', period }),
              stage.metricClientError({ statistic: 'Sum', period }),
              stage.metricServerError({ statistic: 'Sum', period }),
            ],
            width: 12,
          }),
          new GraphWidget({
            title: 'API latency',
            left: [
              stage.metricLatency({ statistic: 'p50', period }),
              p99,
              stage.metricIntegrationLatency({ statistic: 'p99', period }),
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

/** Two widgets per dashboard row. */
function pairs<T>(items: readonly T[]): T[][] {
  const rows: T[][] = [];
  for (let i = 0; i < items.length; i += 2) rows.push(items.slice(i, i + 2));
  return rows;
}
