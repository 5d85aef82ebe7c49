import { Match } from 'aws-cdk-lib/assertions';
import { ROUTES } from '../../functions/routes';
import { functionId } from '../../infra/inventory-stack';
import { API_KEYS_TABLE_KEY, INVENTORY_TABLE_KEY } from '../../infra/shared-names';
import { STAGES } from '../../infra/stage-config';
import { logicalIdStartingWith, resourcesOfType, type SynthesizedApp, synthesizeApp } from './synth';

let synthesized: SynthesizedApp;

beforeAll(() => {
  synthesized = synthesizeApp();
});

afterAll(() => synthesized.dispose());

type RawResource = {
  Type: string;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Properties: Record<string, unknown>;
};

const TABLES = [
  { id: 'InventoryTable', logicalId: 'InventoryTableFD135387', key: INVENTORY_TABLE_KEY },
  { id: 'ApiKeysTable', logicalId: 'ApiKeysTable9F4DC7E7', key: API_KEYS_TABLE_KEY },
] as const;

describe.each(STAGES)('Tables of the %s stage', (stage) => {
  const template = () => synthesized.templates[stage];
  const resources = () => template().toJSON().Resources as Record<string, RawResource>;

  it.each(TABLES)('keeps the logical ID of $id, so no deploy replaces the table', ({ logicalId }) => {
    expect(resources()[logicalId]?.Type).toBe('AWS::DynamoDB::Table');
  });

  it.each(TABLES)('keys $id by the shared key schema, on demand, with PITR and encryption', ({ logicalId, key }) => {
    expect(resources()[logicalId]?.Properties).toMatchObject({
      KeySchema: [{ AttributeName: key.name, KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: key.name, AttributeType: key.type }],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
    expect(resources()[logicalId]?.Properties).not.toHaveProperty('TableName');
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
      expect(synthesized.stacks.production.terminationProtection).toBe(true);
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
      expect(synthesized.stacks.staging.terminationProtection).toBe(false);
    });
  }
});

describe.each(STAGES)('Alarms and dashboard of the %s stage', (stage) => {
  const template = () => synthesized.templates[stage];
  const alarms = () => Object.values(resourcesOfType(template(), 'AWS::CloudWatch::Alarm'));
  const topicRef = () => ({ Ref: logicalIdStartingWith(template(), 'AWS::SNS::Topic', 'MonitoringAlarmTopic') });

  it('sends every alarm, and its recovery, to the alarm topic', () => {
    expect(alarms().length).toBeGreaterThan(0);
    for (const alarm of alarms()) {
      expect(alarm.AlarmActions).toEqual([topicRef()]);
      expect(alarm.OKActions).toEqual([topicRef()]);
      expect(alarm.TreatMissingData).toBe('notBreaching');
    }
  });

  it('encrypts the alarm topic with a rotated key CloudWatch may use, and refuses non-TLS publishers', () => {
    const keyId = logicalIdStartingWith(template(), 'AWS::KMS::Key', 'MonitoringAlarmTopicKey');
    template().hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } });
    template().hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
    template().hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('subscribes no e-mail when none is configured', () => {
    template().resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('alarms on the API 5xx rate with the stage threshold', () => {
    template().hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5XXError',
      Statistic: 'Average',
      Threshold: stage === 'production' ? 0.01 : 0.05,
      Dimensions: Match.arrayWith([{ Name: 'Stage', Value: Match.anyValue() }]),
    });
  });

  it('alarms on the API p99 latency with the stage threshold', () => {
    template().hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Threshold: stage === 'production' ? 1000 : 2000,
    });
  });

  it.each([...ROUTES.map((route) => functionId(route.operationId)), 'AuthorizerFunction'])(
    'alarms on errors and throttles of %s',
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
