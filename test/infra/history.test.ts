import { ENV } from '../../functions/config';
import { STAGES } from '../../infra/stage-config';
import { HISTORY_FEED_INDEX, HISTORY_STREAM_MAPPING, HISTORY_TABLE_KEY, STACK_OUTPUTS } from '../../service/names';
import {
  buildApp,
  functionEnvironment,
  logicalIdStartingWith,
  only,
  type RawResource,
  resourcesOfType,
  synthesizeBeforeAll,
} from './synth';

const synthesized = synthesizeBeforeAll();

describe.each(STAGES)('The stock change history of the %s stage', (stage) => {
  const template = () => synthesized().templates[stage];
  const resources = () => template().toJSON().Resources as Record<string, RawResource>;
  const production = stage === 'production';
  const historyTableId = () => logicalIdStartingWith(template(), 'AWS::DynamoDB::Table', 'HistoryTable');
  const historyFunctionId = () => logicalIdStartingWith(template(), 'AWS::Lambda::Function', 'HistoryFunction');
  const queueId = () => logicalIdStartingWith(template(), 'AWS::SQS::Queue', 'HistoryFailedRecords');
  const mapping = () =>
    only(
      Object.values(resourcesOfType(template(), 'AWS::Lambda::EventSourceMapping')).filter((props) =>
        JSON.stringify(props.EventSourceArn).includes('InventoryTable'),
      ),
    );

  it('turns on the stream of the inventory table (new and old images) and keeps its logical ID', () => {
    expect(resources().InventoryTableFD135387?.Properties.StreamSpecification).toEqual({
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    });
  });

  it('keys the history table for "one pet, oldest first": petId (N) then the stream sequence number (S)', () => {
    expect(resources()[historyTableId()]?.Properties).toMatchObject({
      KeySchema: [
        { AttributeName: HISTORY_TABLE_KEY.partition.name, KeyType: 'HASH' },
        { AttributeName: HISTORY_TABLE_KEY.sort.name, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'petId', AttributeType: 'N' },
        { AttributeName: 'sequence', AttributeType: 'S' },
        { AttributeName: 'feed', AttributeType: 'N' },
        { AttributeName: 'feedSequence', AttributeType: 'N' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      OnDemandThroughput: { MaxReadRequestUnits: production ? 500 : 100 },
    });
  });

  it('gives the history table the feed index: every row under `feed`, in feedSequence order, whole, with a read cap', () => {
    expect(resources()[historyTableId()]?.Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: HISTORY_FEED_INDEX.name,
        KeySchema: [
          { AttributeName: 'feed', KeyType: 'HASH' },
          { AttributeName: 'feedSequence', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
        OnDemandThroughput: { MaxReadRequestUnits: production ? 500 : 100 },
      },
    ]);
  });

  it('expires history rows through TTL on expiresAt, after the stage retention the function is told', () => {
    expect(resources()[historyTableId()]?.Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expiresAt',
      Enabled: true,
    });
    const variables = functionEnvironment(template(), 'HistoryFunction');
    expect(variables).toMatchObject({
      [ENV.historyRetentionDays]: production ? '730' : '90',
      [ENV.historyTable]: { Ref: historyTableId() },
      [ENV.stage]: stage,
    });
    expect(variables).not.toHaveProperty(ENV.inventoryTable);
  });

  it(
    production
      ? 'retains the history table and its queue and protects the table from deletion'
      : 'lets a teardown delete the history table and its queue',
    () => {
      const policy = production ? 'Retain' : 'Delete';
      expect(resources()[historyTableId()]).toMatchObject({ DeletionPolicy: policy, UpdateReplacePolicy: policy });
      expect(resources()[historyTableId()]?.Properties.DeletionProtectionEnabled === true).toBe(production);
      expect(resources()[queueId()]).toMatchObject({ DeletionPolicy: policy });
    },
  );

  it("feeds the history function's live alias from the stream, from the oldest record, with partial batch responses", () => {
    const aliasId = logicalIdStartingWith(template(), 'AWS::Lambda::Alias', 'HistoryFunctionLiveAlias');
    expect(mapping()).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': ['InventoryTableFD135387', 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: HISTORY_STREAM_MAPPING.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // CDK names the alias as `<function name>:live`, taken from the alias ARN.
    const target = JSON.stringify(mapping().FunctionName);
    expect(target).toContain(JSON.stringify({ Ref: aliasId }));
    expect(target).toContain('":live"');
  });

  it('bisects a failing batch, retries it a bounded number of times, and sends what it gives up on to the queue', () => {
    expect(mapping()).toMatchObject({
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      MaximumRecordAgeInSeconds: 6 * 60 * 60,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId(), 'Arn'] } } },
    });
  });

  // Its non-TLS deny is evaluated in test/infra/permissions.test.ts ("Stream mapping → on-failure queue").
  it('encrypts the on-failure queue and keeps messages 14 days', () => {
    expect(resources()[queueId()]?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 60 * 60,
    });
  });

  it('alarms when the history falls behind the stream, and on any batch it gave up on', () => {
    const alarms = resourcesOfType(template(), 'AWS::CloudWatch::Alarm');
    const alarm = (name: string) =>
      alarms[logicalIdStartingWith(template(), 'AWS::CloudWatch::Alarm', `Monitoring${name}`)] as Record<
        string,
        unknown
      > & { Metrics: { MetricStat: { Metric: Record<string, unknown>; Stat: string } }[] };
    const iteratorAge = alarm('HistoryIteratorAgeAlarm');
    expect(only(iteratorAge.Metrics).MetricStat).toMatchObject({
      Metric: {
        Namespace: 'AWS/Lambda',
        MetricName: 'IteratorAge',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: historyFunctionId() } }],
      },
      Stat: 'Maximum',
    });
    expect(iteratorAge.Threshold).toBe(production ? 60_000 : 300_000);
    const failed = alarm('HistoryFailedRecordsAlarm');
    expect(only(failed.Metrics).MetricStat).toMatchObject({
      Metric: {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId(), 'QueueName'] } }],
      },
      Stat: 'Maximum',
    });
    // One message pages, read back past CloudWatch's publishing delay (docs/deploying.md, "How the alarms are evaluated").
    expect(failed).toMatchObject({ Threshold: 1, EvaluationPeriods: production ? 4 : 2, DatapointsToAlarm: 1 });
  });

  it("rolls a deploy of the history function back on its new version's own crashes, like every function's", () => {
    const aliasId = logicalIdStartingWith(template(), 'AWS::Lambda::Alias', 'HistoryFunctionLiveAlias');
    const group = (
      resources()[aliasId] as RawResource & { UpdatePolicy: Record<string, { DeploymentGroupName: { Ref: string } }> }
    ).UpdatePolicy.CodeDeployLambdaAliasUpdate?.DeploymentGroupName.Ref;
    const alarms = JSON.stringify(resources()[group ?? '']?.Properties.AlarmConfiguration);
    expect(alarms).toContain(
      logicalIdStartingWith(template(), 'AWS::CloudWatch::Alarm', 'RolloutHistoryNewVersionErrorsAlarm'),
    );
  });

  it('runs the history function as every function runs: Node 24, arm64, 256 MB, 10 s, X-Ray', () => {
    expect(resources()[historyFunctionId()]?.Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 256,
      Timeout: 10,
      TracingConfig: { Mode: 'Active' },
    });
  });

  it('outputs the history table name for `inventory history --stage`', () => {
    expect(template().toJSON().Outputs[STACK_OUTPUTS.historyTable]).toMatchObject({ Value: { Ref: historyTableId() } });
  });
});

describe('History retention', () => {
  it('refuses a retention that is not a positive number of days', () => {
    expect(() => buildApp({ 'production:historyRetentionDays': '0' })).toThrow(
      /production:historyRetentionDays must be a positive integer \(days\); got "0"/,
    );
  });
});
