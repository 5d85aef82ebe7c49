import { readFileSync } from 'node:fs';
import { functionId } from '../../infra/inventory-stack';
import { STAGES } from '../../infra/stage-config';
import { LIST_NEAR_TIMEOUT_SHARE } from '../../service/metric-names';
import { API_KEYS_TABLE_KEY, INVENTORY_LIST_INDEX, INVENTORY_TABLE_KEY } from '../../service/names';
import { LIST_INVENTORY_TIMEOUT_SECONDS, ROUTES } from '../../service/routes';
import { type EvaluatedAlarm, evaluatedAlarm, type PeriodData } from './alarm-evaluation';
import { logicalIdStartingWith, only, type RawResource, resourcesOfType, synthesizeBeforeAll } from './synth';

const synthesized = synthesizeBeforeAll();

/** CloudWatch's publishing delay a late point is given: three minutes, the least the alarms must allow for. */
const PUBLISHING_DELAY_SECONDS = 180;

const TABLES = [
  { id: 'InventoryTable', logicalId: 'InventoryTableFD135387', key: INVENTORY_TABLE_KEY },
  { id: 'ApiKeysTable', logicalId: 'ApiKeysTable9F4DC7E7', key: API_KEYS_TABLE_KEY },
] as const;

/** The throttle counts DynamoDB sends for a capped table or index, in the order the alarms read them. */
const INDEX_THROTTLE_METRICS = {
  read: [
    'ReadThrottleEvents',
    'ReadMaxOnDemandThroughputThrottleEvents',
    'ReadKeyRangeThroughputThrottleEvents',
    'ReadAccountLimitThrottleEvents',
  ],
  write: ['WriteThrottleEvents', 'WriteKeyRangeThroughputThrottleEvents', 'WriteAccountLimitThrottleEvents'],
} as const;

/**
 * Feeds each metric of an alarm alone, three periods long, then quiet: the alarm must be in ALARM while it lasts and
 * OK after, whichever of its metrics the service sends.
 */
function expectEachMetricAlonePages(name: string, alarm: EvaluatedAlarm): void {
  for (const id of alarm.metricIds) {
    const burst = { [id]: 1 };
    const states = alarm.run([burst, burst, burst, ...alarm.quiet()], 'OK');
    expect({ name, id, during: states[2], after: states.at(-1) }).toEqual({ name, id, during: 'ALARM', after: 'OK' });
  }
}

describe.each(STAGES)('Tables of the %s stage', (stage) => {
  const template = () => synthesized().templates[stage];
  const resources = () => template().toJSON().Resources as Record<string, RawResource>;

  it.each(TABLES)('keeps the logical ID of $id, so no deploy replaces the table', ({ logicalId }) => {
    expect(resources()[logicalId]?.Type).toBe('AWS::DynamoDB::Table');
  });

  it.each(TABLES)('keys $id by the shared key schema, on demand, with PITR and encryption', ({ logicalId, key }) => {
    expect(resources()[logicalId]?.Properties.AttributeDefinitions).toContainEqual({
      AttributeName: key.name,
      AttributeType: key.type,
    });
    expect(resources()[logicalId]?.Properties).toMatchObject({
      KeySchema: [{ AttributeName: key.name, KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
    expect(resources()[logicalId]?.Properties).not.toHaveProperty('TableName');
  });

  it.each(TABLES)('caps the read units per second of $id, so a client storm has a ceiling on cost', ({ logicalId }) => {
    const caps =
      stage === 'production'
        ? { InventoryTable: 4000, ApiKeysTable: 1000 }
        : { InventoryTable: 1000, ApiKeysTable: 200 };
    const id = logicalId.startsWith('Inventory') ? 'InventoryTable' : 'ApiKeysTable';
    expect(resources()[logicalId]?.Properties.OnDemandThroughput).toEqual({ MaxReadRequestUnits: caps[id] });
  });

  it('gives the inventory table the list index: shard and petId (Numbers), only quantity, status and version projected, its own read cap', () => {
    const properties = resources().InventoryTableFD135387?.Properties as Record<string, unknown>;
    expect(properties.AttributeDefinitions).toEqual(
      expect.arrayContaining([
        { AttributeName: INVENTORY_LIST_INDEX.partition.name, AttributeType: 'N' },
        { AttributeName: INVENTORY_LIST_INDEX.sort.name, AttributeType: 'N' },
      ]),
    );
    expect(properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: INVENTORY_LIST_INDEX.name,
        KeySchema: [
          { AttributeName: 'listShard', KeyType: 'HASH' },
          { AttributeName: 'petId', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['quantity', 'status', 'version'] },
        OnDemandThroughput: { MaxReadRequestUnits: stage === 'production' ? 2000 : 500 },
      },
    ]);
  });

  /**
   * "Configuring Lambda function logging" (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-loggroups.html):
   * a function without LoggingConfig.LogGroup logs to /aws/lambda/<name>, which Lambda creates on first use with no
   * expiry and no stack owns, so a teardown leaves it behind. CDK's trigger provider is such a function unless told.
   */
  it("logs every function, CDK's trigger provider too, into a log group of the stack's own, with the stage's retention", () => {
    const all = resources();
    const functions = Object.entries(all).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    expect(functions.map(([id]) => id)).toContainEqual(expect.stringMatching(/^AWSCDKTriggerCustomResourceProvider/));
    for (const [id, fn] of functions) {
      const target = (fn.Properties.LoggingConfig as { LogGroup?: { Ref?: string } } | undefined)?.LogGroup?.Ref;
      const logGroup = target === undefined ? undefined : all[target];
      expect({ id, type: logGroup?.Type }).toEqual({ id, type: 'AWS::Logs::LogGroup' });
      expect({ id, days: logGroup?.Properties.RetentionInDays }).toEqual({
        id,
        days: stage === 'production' ? 90 : 14,
      });
    }
  });

  if (stage === 'production') {
    it.each(TABLES)('retains $id and protects it from deletion', ({ logicalId }) => {
      expect(resources()[logicalId]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
      expect(resources()[logicalId]?.Properties.DeletionProtectionEnabled).toBe(true);
    });

    it('retains log groups and turns on stack termination protection', () => {
      for (const logGroup of Object.values(resources()).filter((r) => r.Type === 'AWS::Logs::LogGroup')) {
        expect(logGroup.DeletionPolicy).toBe('Retain');
      }
      expect(synthesized().stacks.production.terminationProtection).toBe(true);
    });
  } else {
    it.each(TABLES)('lets a teardown delete $id', ({ logicalId }) => {
      expect(resources()[logicalId]).toMatchObject({ DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete' });
      expect(resources()[logicalId]?.Properties.DeletionProtectionEnabled).not.toBe(true);
    });

    it('deletes log groups with the stack and leaves termination protection off', () => {
      for (const logGroup of Object.values(resources()).filter((r) => r.Type === 'AWS::Logs::LogGroup')) {
        expect(logGroup.DeletionPolicy).toBe('Delete');
      }
      expect(synthesized().stacks.staging.terminationProtection).toBe(false);
    });
  }
});

describe.each(STAGES)('Alarms and dashboard of the %s stage', (stage) => {
  const template = () => synthesized().templates[stage];
  /** The paging alarms (the roll-out's new-version gates are tested with the roll-out, test/infra/functions.test.ts). */
  const alarms = () =>
    Object.entries(resourcesOfType(template(), 'AWS::CloudWatch::Alarm'))
      .filter(([id]) => id.startsWith('Monitoring'))
      .map(([, alarm]) => alarm);
  const topicRef = () => ({ Ref: logicalIdStartingWith(template(), 'AWS::SNS::Topic', 'MonitoringAlarmTopic') });

  it('sends every alarm, and its recovery, to the alarm topic', () => {
    expect(alarms().length).toBeGreaterThan(0);
    for (const alarm of alarms()) {
      expect(alarm.AlarmActions).toEqual([topicRef()]);
      expect(alarm.OKActions).toEqual([topicRef()]);
    }
  });

  // Who may publish to the topic and use its key, over TLS only, is evaluated in test/infra/permissions.test.ts.
  it('encrypts the alarm topic with a rotated key', () => {
    const keyId = logicalIdStartingWith(template(), 'AWS::KMS::Key', 'MonitoringAlarmTopicKey');
    expect(resourcesOfType(template(), 'AWS::KMS::Key')[keyId]?.EnableKeyRotation).toBe(true);
  });

  it('subscribes no e-mail when none is configured', () => {
    template().resourceCountIs('AWS::SNS::Subscription', 0);
  });

  type MetricQuery = {
    Id: string;
    Expression?: string;
    ReturnData?: boolean;
    MetricStat?: {
      Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
      Period: number;
      Stat: string;
    };
  };
  const alarm = (name: string) =>
    resourcesOfType(template(), 'AWS::CloudWatch::Alarm')[
      logicalIdStartingWith(template(), 'AWS::CloudWatch::Alarm', `Monitoring${name}`)
    ] as Record<string, unknown> & { Metrics?: MetricQuery[] };
  /** The alarm's metric-math expression and its metrics by id, as `Namespace/MetricName {dimension: value}`. */
  const mathOf = (name: string) => {
    const queries = alarm(name).Metrics ?? [];
    const expression = only(queries.filter((query) => query.ReturnData !== false)).Expression;
    const metrics = Object.fromEntries(
      queries
        .filter((query) => query.MetricStat)
        .map(({ Id, MetricStat }) => {
          const { Namespace, MetricName, Dimensions } = MetricStat?.Metric ?? { Dimensions: [] };
          const dims = Object.fromEntries(Dimensions.map(({ Name, Value }) => [Name, Value]));
          return [Id, { metric: `${Namespace}/${MetricName}`, dims, stat: MetricStat?.Stat }];
        }),
    );
    return { expression, metrics };
  };
  /** The one metric a single-metric alarm reads, whichever form CDK rendered it in (plain, or a labelled query). */
  const metricOf = (name: string) => {
    const a = alarm(name);
    if (!a.Metrics) {
      const dims = Object.fromEntries(
        (a.Dimensions as { Name: string; Value: unknown }[]).map(({ Name, Value }) => [Name, Value]),
      );
      return { metric: `${a.Namespace}/${a.MetricName}`, dims, stat: a.Statistic, period: a.Period };
    }
    const { MetricStat } = only(a.Metrics);
    const dims = Object.fromEntries(MetricStat?.Metric.Dimensions.map(({ Name, Value }) => [Name, Value]) ?? []);
    const metric = `${MetricStat?.Metric.Namespace}/${MetricStat?.Metric.MetricName}`;
    return { metric, dims, stat: MetricStat?.Stat, period: MetricStat?.Period };
  };
  const stageRef = () => ({ Ref: logicalIdStartingWith(template(), 'AWS::ApiGateway::Stage', 'InventoryApi') });
  const ownMetric = (metricName: string) => ({
    metric: `PetStoreInventory/${metricName}`,
    dims: { service: 'pet-store-inventory', stage },
  });
  const minRequests = stage === 'production' ? 20 : 10;

  it('alarms on the API 5xx rate without the designed 501s, only in periods with enough requests', () => {
    const { expression, metrics } = mathOf('ApiServerErrorRateAlarm');
    expect(expression).toBe(
      `IF(FILL(requests, 0) >= ${minRequests}, (FILL(errors, 0) - FILL(ni0, 0) - FILL(ni1, 0)) / FILL(requests, 0), 0)`,
    );
    const api = { ApiName: `PetStoreInventory-${stage}`, Stage: stageRef() };
    expect(metrics).toEqual({
      requests: { metric: 'AWS/ApiGateway/Count', dims: api, stat: 'Sum' },
      errors: { metric: 'AWS/ApiGateway/5XXError', dims: api, stat: 'Sum' },
      ni0: {
        metric: 'AWS/ApiGateway/5XXError',
        dims: { ...api, Method: 'GET', Resource: '/pets/{petId}' },
        stat: 'Sum',
      },
      ni1: {
        metric: 'AWS/ApiGateway/5XXError',
        dims: { ...api, Method: 'GET', Resource: '/store/orders' },
        stat: 'Sum',
      },
    });
    expect(ROUTES.filter((route) => route.notImplemented).map((route) => route.path)).toEqual([
      '/pets/{petId}',
      '/store/orders',
    ]);
    expect(alarm('ApiServerErrorRateAlarm').Threshold).toBe(stage === 'production' ? 0.01 : 0.05);
  });

  it("alarms on the functions' own faults (InternalError + StorageUnavailable of this stage) per request", () => {
    const { expression, metrics } = mathOf('FunctionFaultRateAlarm');
    expect(expression).toBe(
      `IF(FILL(requests, 0) >= ${minRequests}, (FILL(internal, 0) + FILL(unavailable, 0)) / FILL(requests, 0), 0)`,
    );
    expect(metrics.internal).toMatchObject({ ...ownMetric('InternalError'), stat: 'Sum' });
    expect(metrics.unavailable).toMatchObject({ ...ownMetric('StorageUnavailable'), stat: 'Sum' });
    expect(alarm('FunctionFaultRateAlarm').Threshold).toBe(stage === 'production' ? 0.01 : 0.05);
  });

  it('alarms when the authorizer could not check a key (AuthorizerUnavailable of this stage)', () => {
    expect(metricOf('AuthorizerUnavailableAlarm')).toMatchObject({
      ...ownMetric('AuthorizerUnavailable'),
      stat: 'Sum',
    });
    expect(alarm('AuthorizerUnavailableAlarm').Threshold).toBe(1);
  });

  it("never alarms on the authorizer's Lambda Errors: a refused key is a thrown Unauthorized", () => {
    const authorizerRef = JSON.stringify({
      Ref: logicalIdStartingWith(template(), 'AWS::Lambda::Function', 'AuthorizerFunction'),
    });
    const onAuthorizer = alarms().filter((a) => JSON.stringify(a.Dimensions ?? []).includes(authorizerRef));
    expect(onAuthorizer.map((a) => a.MetricName)).toEqual(['Throttles']);
  });

  it("alarms when one list nears the largest a plain client can get (2,500,000 entries: Lambda's 200 MB stream)", () => {
    expect(metricOf('InventoryListSizeAlarm')).toMatchObject({
      ...ownMetric('InventoryEntriesListed'),
      stat: 'Maximum',
    });
    expect(alarm('InventoryListSizeAlarm')).toMatchObject({
      Threshold: 2_500_000,
      DatapointsToAlarm: 1,
    });
  });

  it('puts the stage dimension on every custom metric an alarm reads, so stages in one account never mix', () => {
    const custom = JSON.stringify(alarms()).match(/"Namespace":"PetStoreInventory"/g) ?? [];
    expect(custom.length).toBeGreaterThanOrEqual(4);
    for (const a of alarms()) {
      const queries = [a, ...((a.Metrics as MetricQuery[] | undefined) ?? []).map((q) => q.MetricStat?.Metric ?? {})];
      for (const query of queries as { Namespace?: string; Dimensions?: { Name: string; Value: unknown }[] }[]) {
        if (query.Namespace === 'PetStoreInventory')
          expect(query.Dimensions).toContainEqual({ Name: 'stage', Value: stage });
      }
    }
  });

  it.each([
    ['Inventory', 'InventoryTableFD135387', stage === 'production' ? 4000 : 1000],
    ['ApiKeys', 'ApiKeysTable9F4DC7E7', stage === 'production' ? 1000 : 200],
  ])('alarms when the %s table reads 80 %% of its read cap per second', (name, logicalId, cap) => {
    const alarmName = `${name}TableReadCapacityAlarm`;
    const { expression, metrics } = mathOf(alarmName);
    expect(expression).toBe('FILL(consumed, 0) / PERIOD(consumed)');
    expect(metrics.consumed).toEqual({
      metric: 'AWS/DynamoDB/ConsumedReadCapacityUnits',
      dims: { TableName: { Ref: logicalId } },
      stat: 'Sum',
    });
    expect(alarm(alarmName).Threshold).toBe(cap * 0.8);
    // As CloudWatch evaluates it: a minute's Sum of consumed units over the period's seconds, against the threshold.
    const evaluated = evaluatedAlarm(alarm(alarmName));
    const period = alarm(alarmName).Metrics?.find((query) => query.Id === 'consumed')?.MetricStat?.Period as number;
    expect(period).toBeGreaterThan(0);
    const sustained = (unitsPerSecond: number) =>
      Array.from({ length: evaluated.evaluationPeriods }, () => ({ consumed: unitsPerSecond * period }));
    expect(evaluated.run(sustained(cap * 0.8), 'OK').at(-1)).toBe('ALARM');
    expect(evaluated.run(sustained(cap * 0.7), 'OK').at(-1)).toBe('OK');
  });

  it('alarms when the list index reads 80 % of its own read cap per second, and when its Queries are throttled', () => {
    const cap = stage === 'production' ? 2000 : 500;
    const { expression, metrics } = mathOf('InventoryListIndexReadCapacityAlarm');
    expect(expression).toBe('FILL(consumed, 0) / PERIOD(consumed)');
    expect(metrics.consumed).toEqual({
      metric: 'AWS/DynamoDB/ConsumedReadCapacityUnits',
      dims: { TableName: { Ref: 'InventoryTableFD135387' }, GlobalSecondaryIndexName: INVENTORY_LIST_INDEX.name },
      stat: 'Sum',
    });
    expect(alarm('InventoryListIndexReadCapacityAlarm').Threshold).toBe(cap * 0.8);
    const throttles = mathOf('InventoryListIndexThrottlesAlarm');
    const onIndex = (metricName: string) => ({
      metric: `AWS/DynamoDB/${metricName}`,
      dims: { TableName: { Ref: 'InventoryTableFD135387' }, GlobalSecondaryIndexName: INVENTORY_LIST_INDEX.name },
      stat: 'Sum',
    });
    expect(Object.values(throttles.metrics)).toEqual(
      expect.arrayContaining([...INDEX_THROTTLE_METRICS.read, ...INDEX_THROTTLE_METRICS.write].map(onIndex)),
    );
    expect(Object.values(throttles.metrics)).toHaveLength(7);
    expect(alarm('InventoryListIndexThrottlesAlarm').Threshold).toBe(1);
  });

  it(
    stage === 'production'
      ? 'evaluates rate alarms per minute, 2 of 3, so one can fire inside the 5-minute canary'
      : 'evaluates rate alarms per 5 minutes, 2 of 2',
    () => {
      for (const name of ['ApiServerErrorRateAlarm', 'FunctionFaultRateAlarm', 'UpdateInventoryLatencyAlarm']) {
        const a = alarm(name);
        const periods = (a.Metrics ?? []).map((q) => q.MetricStat?.Period).filter(Boolean);
        expect(periods.length).toBeGreaterThan(0);
        for (const p of periods) expect(p).toBe(stage === 'production' ? 60 : 300);
        expect([a.EvaluationPeriods, a.DatapointsToAlarm]).toEqual(stage === 'production' ? [3, 2] : [2, 2]);
      }
      expect(metricOf('ListInventoryErrorsAlarm').period).toBe(stage === 'production' ? 60 : 300);
    },
  );

  /** The paging alarms by name (the logical ID without `Monitoring` and CDK's hash), as CloudWatch evaluates them. */
  const evaluated = () =>
    Object.entries(resourcesOfType(template(), 'AWS::CloudWatch::Alarm'))
      .filter(([id]) => id.startsWith('Monitoring'))
      .map(([id, properties]) => ({
        name: id.replace(/^Monitoring/, '').replace(/[0-9A-F]{8}$/, ''),
        alarm: evaluatedAlarm(properties),
      }));
  /** Alarms on events that should never happen: one is enough to page. */
  const isEventAlarm = (name: string) =>
    /^(ListInventoryNearTimeout|AuthorizerUnavailable|InventoryListSize|HistoryFailedRecords)Alarm$/.test(name) ||
    (/(Errors|Throttles)Alarm$/.test(name) &&
      !/(TableSystemErrors|TableThrottles|ListIndexThrottles)Alarm$/.test(name));
  /** The alarm's period in seconds, of its metric or of the metrics its math reads. */
  const periodOf = (name: string) => {
    const properties = alarm(name);
    return (properties.Period ?? properties.Metrics?.find((query) => query.MetricStat)?.MetricStat?.Period) as number;
  };
  /** A period in which each metric the alarm reads is at its threshold (single-metric alarms). */
  const atThreshold = (alarm: EvaluatedAlarm): PeriodData =>
    Object.fromEntries(alarm.metricIds.map((id) => [id, alarm.threshold]));

  it('pages on the first crash, timeout, throttle, failed key check, list near its time-out or its largest size, or given-up history batch, and recovers once the event has left the evaluation range', () => {
    const events = evaluated().filter(({ name }) => isEventAlarm(name));
    // Errors of each route function and the history, throttles of those and the authorizer, and the four above.
    expect(events.map(({ name }) => name).sort()).toEqual(
      expect.arrayContaining([
        'ListInventoryNearTimeoutAlarm',
        'AuthorizerUnavailableAlarm',
        'InventoryListSizeAlarm',
        'HistoryFailedRecordsAlarm',
        'UpdateInventoryErrorsAlarm',
        'ApplyInventoryChangesErrorsAlarm',
        'ApplyInventoryChangesThrottlesAlarm',
        'ListInventoryHistoryErrorsAlarm',
        'ListInventoryHistoryThrottlesAlarm',
        'AuthorizerThrottlesAlarm',
        'HistoryErrorsAlarm',
      ]),
    );
    // The webhooks publisher's Errors and Throttles are two more.
    expect(events.length).toBe(4 + (ROUTES.length + 1) + (ROUTES.length + 2) + 2);
    for (const { name, alarm } of events) {
      const states = alarm.run([atThreshold(alarm), ...alarm.quiet()], 'OK');
      expect({ name, first: states[0], last: states.at(-1) }).toEqual({ name, first: 'ALARM', last: 'OK' });
      // The same event stamped at the end of a period and taken in by CloudWatch the publishing delay later.
      const period = periodOf(name);
      const arrives = Math.floor((period - 1 + PUBLISHING_DELAY_SECONDS) / period);
      const quiet = Array.from({ length: arrives + 1 }, () => ({}));
      const late = alarm.run(quiet, 'OK', [{ stamped: 0, arrives, data: atThreshold(alarm) }]);
      expect({ name, late: late[arrives] }).toEqual({ name, late: 'ALARM' });
    }
  });

  it('returns every alarm to OK once its metrics send nothing, the DynamoDB ones too (they keep their state on missing data)', () => {
    for (const { name, alarm } of evaluated()) {
      expect({ name, last: alarm.run(alarm.quiet(), 'ALARM').at(-1) }).toEqual({ name, last: 'OK' });
    }
  });

  it('pages on a throttled table or list index while it lasts, and recovers after the burst', () => {
    const throttleAlarms = evaluated().filter(({ name }) => /(TableThrottles|ListIndexThrottles)Alarm$/.test(name));
    expect(throttleAlarms.map(({ name }) => name).sort()).toEqual([
      'ApiKeysTableThrottlesAlarm',
      'HistoryTableThrottlesAlarm',
      'IdempotencyTableThrottlesAlarm',
      'InventoryListIndexThrottlesAlarm',
      'InventoryTableThrottlesAlarm',
    ]);
    for (const { name, alarm } of throttleAlarms) {
      const burst = Object.fromEntries(alarm.metricIds.map((id) => [id, 5]));
      const states = alarm.run([burst, burst, burst, ...alarm.quiet()], 'OK');
      expect({ name, during: states[2], after: states.at(-1) }).toEqual({ name, during: 'ALARM', after: 'OK' });
    }
  });

  /**
   * DynamoDB counts ReadThrottleEvents/WriteThrottleEvents and, apart, one count per cause: a table's or index's own
   * on-demand maximum (maxReadRequestUnits, the capped tables' read limit), a partition's limit, the account's
   * per-table limit ("CloudWatch throttling metrics",
   * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TroubleshootingThrottling-cloudwatch.html), and
   * does not say whether the general counts include the others: each count alone must page, and a throttle DynamoDB
   * reports in two of them must not be counted twice.
   */
  it('pages on a throttle DynamoDB reports in any one of its throttle counts alone, and counts one reported in two once', () => {
    const expected: Record<string, readonly string[]> = {
      InventoryTableThrottlesAlarm: [...INDEX_THROTTLE_METRICS.read, ...INDEX_THROTTLE_METRICS.write],
      ApiKeysTableThrottlesAlarm: [...INDEX_THROTTLE_METRICS.read, ...INDEX_THROTTLE_METRICS.write],
      HistoryTableThrottlesAlarm: [...INDEX_THROTTLE_METRICS.read, ...INDEX_THROTTLE_METRICS.write],
      InventoryListIndexThrottlesAlarm: [...INDEX_THROTTLE_METRICS.read, ...INDEX_THROTTLE_METRICS.write],
      // No read cap on the idempotency table: no on-demand maximum to count.
      IdempotencyTableThrottlesAlarm: [
        ...INDEX_THROTTLE_METRICS.read.filter((name) => !name.includes('MaxOnDemand')),
        ...INDEX_THROTTLE_METRICS.write,
      ],
    };
    for (const { name, alarm } of evaluated().filter(({ name }) => name in expected)) {
      const metricNames = Object.values(mathOf(name).metrics)
        .map((m) => (m as { metric: string }).metric)
        .sort();
      expect({ name, metricNames }).toEqual({
        name,
        metricNames: (expected[name] ?? []).map((metricName) => `AWS/DynamoDB/${metricName}`).sort(),
      });
      expectEachMetricAlonePages(name, alarm);
      const [general, cause] = alarm.metricIds;
      expect({ name, value: alarm.value({ [general as string]: 5, [cause as string]: 5 }) }).toEqual({
        name,
        value: 5,
      });
    }
  });

  it("pages on a table's system errors, on any one of the operations the service runs, and recovers after them", () => {
    const errorAlarms = evaluated().filter(({ name }) => /TableSystemErrorsAlarm$/.test(name));
    expect(errorAlarms.map(({ name }) => name).sort()).toEqual([
      'ApiKeysTableSystemErrorsAlarm',
      'HistoryTableSystemErrorsAlarm',
      'IdempotencyTableSystemErrorsAlarm',
      'InventoryTableSystemErrorsAlarm',
    ]);
    for (const { name, alarm } of errorAlarms) {
      // Each operation's SystemErrors alone (DynamoDB sends it per Operation), for as long as it lasts.
      expectEachMetricAlonePages(name, alarm);
    }
  });

  it("needs more than one bad period of the 5xx rate, the functions' fault rate or any route latency, and none from too few requests; pages on the history lagging its stream", () => {
    const byName = new Map(evaluated().map(({ name, alarm }) => [name, alarm]));
    const rate = byName.get('ApiServerErrorRateAlarm') as EvaluatedAlarm;
    const failing = { requests: 100, errors: 100 };
    expect(rate.run([failing, {}, {}], 'OK')).toEqual(['OK', 'OK', 'OK']);
    expect(rate.run([failing, failing], 'OK').at(-1)).toBe('ALARM');
    const few = { requests: minRequests - 1, errors: minRequests - 1 };
    expect(rate.run([few, few, few], 'OK')).toEqual(['OK', 'OK', 'OK']);
    // The designed 501s of /pets are left out: a period of nothing but 501s is no failure.
    expect(
      rate.run(
        [
          { requests: 100, errors: 100, ni0: 60, ni1: 40 },
          { requests: 100, errors: 100, ni0: 100 },
        ],
        'OK',
      ),
    ).toEqual(['OK', 'OK']);
    // Every buffered route's p99 latency alarm, the same way.
    for (const route of ROUTES.filter((candidate) => !candidate.streaming)) {
      const name = `${route.operationId.charAt(0).toUpperCase()}${route.operationId.slice(1)}LatencyAlarm`;
      const latency = byName.get(name) as EvaluatedAlarm;
      const slow = { requests: 100, latency: latency.threshold };
      const fewSlow = { requests: minRequests - 1, latency: latency.threshold * 10 };
      expect({ name, once: latency.run([slow, {}, {}], 'OK').at(-1) }).toEqual({ name, once: 'OK' });
      expect({ name, twice: latency.run([slow, slow], 'OK').at(-1) }).toEqual({ name, twice: 'ALARM' });
      expect({ name, few: latency.run([fewSlow, fewSlow, fewSlow], 'OK').at(-1) }).toEqual({ name, few: 'OK' });
    }
    // The functions' own 500/503 per request: two bad periods of enough requests page, too few never do.
    const faults = byName.get('FunctionFaultRateAlarm') as EvaluatedAlarm;
    const atRate = Math.ceil(100 * faults.threshold);
    for (const faulty of [
      { requests: 100, internal: atRate },
      { requests: 100, unavailable: atRate },
    ]) {
      expect(faults.run([faulty, {}, {}], 'OK').at(-1)).toBe('OK');
      expect(faults.run([faulty, faulty], 'OK').at(-1)).toBe('ALARM');
    }
    expect(faults.run([{ requests: 100, unavailable: 0 }, { requests: 100 }], 'OK').at(-1)).toBe('OK');
    const fewFaults = { requests: minRequests - 1, internal: minRequests - 1 };
    expect(faults.run([fewFaults, fewFaults, fewFaults], 'OK').at(-1)).toBe('OK');
    // The history behind its stream by the threshold pages; caught up, it recovers.
    const iteratorAge = byName.get('HistoryIteratorAgeAlarm') as EvaluatedAlarm;
    const behind = Object.fromEntries(iteratorAge.metricIds.map((id) => [id, iteratorAge.threshold]));
    const caughtUp = Object.fromEntries(iteratorAge.metricIds.map((id) => [id, 0]));
    const lagging = Array.from({ length: iteratorAge.evaluationPeriods }, () => behind);
    expect(iteratorAge.run(lagging, 'OK').at(-1)).toBe('ALARM');
    expect(
      iteratorAge
        .run([...lagging, ...Array.from({ length: iteratorAge.evaluationRange }, () => caughtUp)], 'OK')
        .at(-1),
    ).toBe('OK');
  });

  it('has no stage-wide latency alarm: the streamed list counts until its last byte', () => {
    for (const a of alarms()) {
      const metrics = [a, ...((a.Metrics as MetricQuery[] | undefined) ?? []).map((q) => q.MetricStat?.Metric ?? {})];
      for (const m of metrics as { MetricName?: string; Dimensions?: { Name: string }[] }[]) {
        if (m.MetricName === 'Latency') expect(m.Dimensions?.map((d) => d.Name)).toContain('Resource');
      }
    }
  });

  /**
   * "Amazon API Gateway dimensions and metrics"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-metrics-and-dimensions.html): a method's
   * metrics carry ApiName, Method, Resource and Stage, and API Gateway only sends them with detailed metrics on
   * (the stage's MethodSettings `MetricsEnabled`, checked in api.test.ts).
   */
  it.each(ROUTES.filter((route) => !route.streaming))(
    'alarms on the p99 latency of $method $path alone, with the dimensions API Gateway sends per method',
    (route) => {
      const name = `${route.operationId.charAt(0).toUpperCase()}${route.operationId.slice(1)}LatencyAlarm`;
      const { expression, metrics } = mathOf(name);
      expect(expression).toBe(`IF(FILL(requests, 0) >= ${minRequests}, FILL(latency, 0), 0)`);
      const dims = {
        ApiName: `PetStoreInventory-${stage}`,
        Method: route.method,
        Resource: route.path,
        Stage: stageRef(),
      };
      expect(metrics).toEqual({
        requests: { metric: 'AWS/ApiGateway/Count', dims, stat: 'Sum' },
        latency: { metric: 'AWS/ApiGateway/Latency', dims, stat: 'p99' },
      });
      expect(alarm(name).Threshold).toBe(stage === 'production' ? 1000 : 2000);
    },
  );

  it('pages while a list still runs at 80 % of its timeout: on the first InventoryListNearTimeout the list sends', () => {
    expect(metricOf('ListInventoryNearTimeoutAlarm')).toMatchObject({
      ...ownMetric('InventoryListNearTimeout'),
      stat: 'Sum',
    });
    const nearTimeout = evaluatedAlarm(alarm('ListInventoryNearTimeoutAlarm'));
    const oneList = Object.fromEntries(nearTimeout.metricIds.map((id) => [id, 1]));
    expect(nearTimeout.run([oneList, ...nearTimeout.quiet()], 'OK')).toEqual([
      'ALARM',
      ...Array(nearTimeout.evaluationRange - 1).fill('ALARM'),
      'OK',
    ]);
    expect(LIST_NEAR_TIMEOUT_SHARE).toBe(0.8);
    expect(ROUTES.filter((route) => route.streaming).map((route) => route.operationId)).toEqual(['listInventory']);
  });

  /**
   * "Working with Lambda function metrics" (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics.html):
   * Lambda sends an invocation's metrics when it ends, stamped with its start, and CloudWatch takes them in later
   * still (PUBLISHING_DELAY_SECONDS). A list started at the very end of a period and cut off at its time-out sends
   * its Errors point into a period its alarms evaluated LIST_INVENTORY_TIMEOUT_SECONDS + that delay before.
   */
  it("pages on a list's Errors point that arrives after its time-out and CloudWatch's publishing delay", () => {
    const listRef = JSON.stringify({
      Ref: logicalIdStartingWith(template(), 'AWS::Lambda::Function', 'ListInventoryFunction'),
    });
    const onList = Object.entries(resourcesOfType(template(), 'AWS::CloudWatch::Alarm')).filter(
      ([, a]) => a.Namespace === 'AWS/Lambda' && JSON.stringify(a.Dimensions).includes(listRef),
    );
    // The stage-wide Errors and Throttles, and the deploy's gate of the list's version.
    expect(onList.map(([id]) => id.replace(/[0-9A-F]{8}(V[0-9A-F]{8})?$/, '')).sort()).toEqual([
      'MonitoringListInventoryErrorsAlarm',
      'MonitoringListInventoryThrottlesAlarm',
      'RolloutListInventoryNewVersionErrorsAlarm',
    ]);
    expect(JSON.stringify(alarms())).not.toContain('"MetricName":"Duration"');
    const onErrors = onList.filter(([, properties]) => properties.MetricName === 'Errors');
    expect(onErrors).toHaveLength(2);
    for (const [id, properties] of onErrors) {
      const evaluated = evaluatedAlarm(properties);
      const period = properties.Period as number;
      const arrives = Math.floor((period - 1 + LIST_INVENTORY_TIMEOUT_SECONDS + PUBLISHING_DELAY_SECONDS) / period);
      // The function is busy: every period has a good point of other invocations.
      const busy = Array.from({ length: arrives + 1 }, () => ({ m: 0 }));
      const states = evaluated.run(busy, 'OK', [{ stamped: 0, arrives, data: { m: 1 } }]);
      expect({ id, before: states.slice(0, arrives), atArrival: states[arrives] }).toEqual({
        id,
        before: Array(arrives).fill('OK'),
        atArrival: 'ALARM',
      });
    }
  });

  // A throttled request is refused at once, so its point is late by the publishing delay alone.
  it('pages on a one-off throttle of any function that arrives after the publishing delay, and is OK again within 15 minutes', () => {
    const throttleAlarms = evaluated().filter(
      ({ name }) => /^\w+ThrottlesAlarm$/.test(name) && !/Table|Index/.test(name),
    );
    // Every route's function, the authorizer, the history function and the webhooks publisher.
    expect(throttleAlarms).toHaveLength(ROUTES.length + 3);
    for (const { name, alarm: evaluatedThrottles } of throttleAlarms) {
      const period = alarm(name).Period as number;
      const arrives = Math.floor((period - 1 + PUBLISHING_DELAY_SECONDS) / period);
      const quiet = Array.from({ length: Math.ceil(3600 / period) }, () => ({}));
      const states = evaluatedThrottles.run(quiet, 'OK', [{ stamped: 0, arrives, data: { m: 1 } }]);
      const clearsAt = states.indexOf('OK', arrives);
      expect({ name, atArrival: states[arrives], cleared: clearsAt > arrives }).toEqual({
        name,
        atArrival: 'ALARM',
        cleared: true,
      });
      // Stamped at the end of period 0: OK again less than 15 minutes after the throttle.
      expect({ name, secondsInAlarm: clearsAt * period - (period - 1) < 15 * 60 }).toEqual({
        name,
        secondsInAlarm: true,
      });
    }
  });

  /**
   * "Use metric math" (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html): an
   * expression over a metric with no data point at a time has no value there, and FILL fills the gaps. DynamoDB and
   * API Gateway send many metrics only when something happened, so every metric an alarm's math reads is filled
   * (PERIOD only reads the period).
   */
  it('fills every metric a math alarm reads, so sums of sparse metrics have a value', () => {
    const mathAlarms = alarms().filter((a) => (a.Metrics as MetricQuery[] | undefined)?.some((q) => q.Expression));
    expect(mathAlarms.length).toBeGreaterThan(10);
    for (const a of mathAlarms) {
      const queries = a.Metrics as MetricQuery[];
      const ids = queries.filter((q) => q.MetricStat).map((q) => q.Id);
      const expression = only(queries.filter((q) => q.Expression)).Expression as string;
      let rest = expression;
      for (const id of ids) rest = rest.replace(new RegExp(`FILL\\(${id}, 0\\)|PERIOD\\(${id}\\)`, 'g'), '');
      for (const id of ids)
        expect({ expression, bare: new RegExp(`\\b${id}\\b`).test(rest) }).toEqual({ expression, bare: false });
    }
  });

  it.each(ROUTES.map((route) => functionId(route.operationId)))(
    'alarms on errors (crashes, timeouts) and throttles of %s',
    (id) => {
      const fnRef = { Ref: logicalIdStartingWith(template(), 'AWS::Lambda::Function', id) };
      for (const metricName of ['Errors', 'Throttles']) {
        template().hasResourceProperties('AWS::CloudWatch::Alarm', {
          Namespace: 'AWS/Lambda',
          MetricName: metricName,
          Statistic: 'Sum',
          Dimensions: [{ Name: 'FunctionName', Value: fnRef }],
        });
      }
    },
  );

  it.each(TABLES)('alarms on throttles and system errors of $id', ({ logicalId }) => {
    const metricsOf = (alarm: Record<string, unknown>) => JSON.stringify(alarm.Metrics ?? []);
    const onTable = alarms().filter((alarm) => metricsOf(alarm).includes(`"Ref":"${logicalId}"`));
    expect(onTable.some((alarm) => metricsOf(alarm).includes('ReadThrottleEvents'))).toBe(true);
    expect(onTable.some((alarm) => metricsOf(alarm).includes('WriteThrottleEvents'))).toBe(true);
    expect(onTable.some((alarm) => metricsOf(alarm).includes('SystemErrors'))).toBe(true);
  });

  it('draws a dashboard of the alarms, the API, each function and each table', () => {
    const [dashboard] = Object.values(resourcesOfType(template(), 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard?.DashboardBody);
    for (const text of ['5XXError', 'Latency', 'Errors', 'Throttles', 'ReadThrottleEvents', 'SystemErrors', 'alarms']) {
      expect(body).toContain(text);
    }
  });
});

describe('docs/deploying.md against the synthesized stacks', () => {
  const guide = readFileSync(new URL('../../docs/deploying.md', import.meta.url), 'utf8');
  const headings = new Set([...guide.matchAll(/^### `?([^`\n]+)`?$/gm)].map((match) => match[1]));

  it.each(STAGES)('has a runbook section for every alarm of %s, named in the alarm description', (stage) => {
    const alarms = Object.values(resourcesOfType(synthesized().templates[stage], 'AWS::CloudWatch::Alarm'));
    for (const alarm of alarms) {
      const runbook = /Runbook: docs\/deploying\.md, "Alarm runbooks", ([^.]+)\.$/.exec(String(alarm.AlarmDescription));
      expect({ alarm: alarm.AlarmDescription, runbook: runbook?.[1] && headings.has(runbook[1]) }).toEqual({
        alarm: alarm.AlarmDescription,
        runbook: true,
      });
    }
  });

  it.each(STAGES)(
    'lists, in each runbook for a kind of alarm that names its alarms, exactly the alarms of %s sent to it',
    (stage) => {
      // Each alarm by its construct name (its logical id without the construct's prefix and CDK's 8-character hash),
      // grouped by the runbook section its description sends the reader to.
      const bySection = new Map<string, string[]>();
      for (const [id, alarm] of Object.entries(
        resourcesOfType(synthesized().templates[stage], 'AWS::CloudWatch::Alarm'),
      )) {
        const section = /"Alarm runbooks", ([^.]+)\.$/.exec(String(alarm.AlarmDescription))?.[1] ?? '';
        bySection.set(section, [
          ...(bySection.get(section) ?? []),
          // A rollout gate's id also ends in its version's mark (V and 8 characters: infra/constructs/rollout.ts).
          id
            .replace(/^(Monitoring|Rollout)/, '')
            .replace(/V[0-9A-F]{8}$/, '')
            .slice(0, -8),
        ]);
      }
      const alarms = new Set([...bySection.values()].flat());
      // The alarms each section for a kind of alarm (`<…>` in its heading) names in its text.
      const listing: Record<string, string[]> = {};
      for (const section of guide.split(/^### /m).slice(1)) {
        const heading = (section.split('\n')[0] ?? '').replaceAll('`', '');
        if (!heading.includes('<')) continue;
        const named = [...section.matchAll(/`(\w+Alarm)`/g)].map((match) => match[1] as string);
        const concrete = [...new Set(named.filter((name) => alarms.has(name)))].sort();
        if (concrete.length > 0) listing[heading] = concrete;
      }
      expect(Object.keys(listing).sort()).toEqual([
        '<Function>ErrorsAlarm',
        '<Route>LatencyAlarm',
        '<Table>TableThrottlesAlarm',
      ]);
      for (const [heading, names] of Object.entries(listing))
        expect({ heading, names }).toEqual({ heading, names: [...(bySection.get(heading) ?? [])].sort() });
    },
  );

  it('names the log groups the stacks really create', () => {
    const logGroups = resourcesOfType(synthesized().templates.staging, 'AWS::Logs::LogGroup');
    const named = [...guide.matchAll(/`PetStoreInventory-staging-(\w+)-/g)].map((match) => match[1]);
    expect(named.length).toBeGreaterThanOrEqual(2);
    for (const logicalId of named) expect(Object.keys(logGroups)).toContain(logicalId);
    const execution = Object.values(logGroups).find((props) =>
      JSON.stringify(props.LogGroupName ?? '').includes('Execution'),
    );
    expect(JSON.stringify(execution?.LogGroupName)).toContain('"API-Gateway-Execution-Logs_"');
    expect(guide).toContain('`API-Gateway-Execution-Logs_<RestApiId>/v1`');
  });
});
