import { rmSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { ENV } from '../../functions/config';
import {
  PRE_TRAFFIC_DEADLINE_MS,
  PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS,
  PRE_TRAFFIC_REPORT_MARGIN_SECONDS,
} from '../../functions/deploy/pre-traffic';
import { AUTHORIZER_ALL_FAILED_INVOCATIONS } from '../../infra/constructs/rollout';
import { functionId } from '../../infra/inventory-stack';
import { STAGES } from '../../infra/stage-config';
import {
  AUTHORIZER_TIMEOUT_SECONDS,
  LIST_INVENTORY_TIMEOUT_SECONDS,
  PETS_DEPRECATED_AT,
  ROUTES,
} from '../../service/routes';
import { evaluatedAlarm } from './alarm-evaluation';
import {
  buildApp,
  functionEnvironment,
  functionProperties,
  logicalIdStartingWith,
  only,
  type PolicyStatement,
  type RawResource,
  resourcesOfType,
  roleStatements,
  synthesizeBeforeAll,
} from './synth';

const synthesized = synthesizeBeforeAll();

const FUNCTION_IDS = [...ROUTES.map((route) => functionId(route.operationId)), 'AuthorizerFunction'];

/** Every statement of every policy attached to the function's role. */
function statementsOf(template: Template, id: string): PolicyStatement[] {
  return roleStatements(template, logicalIdStartingWith(template, 'AWS::Lambda::Function', id));
}

const tableRef = (template: Template, id: string) => ({
  Ref: logicalIdStartingWith(template, 'AWS::DynamoDB::Table', id),
});

describe.each(STAGES)('Functions of the %s stage', (stage) => {
  const template = () => synthesized().templates[stage];

  it('gives listInventory 1024 MB (twice its measured peak at 1,000,000 entries) and every other function 256 MB', () => {
    for (const id of FUNCTION_IDS) {
      expect([id, functionProperties(template(), id).MemorySize]).toEqual([
        id,
        id === functionId('listInventory') ? 1024 : 256,
      ]);
    }
  });

  it.each(FUNCTION_IDS)(
    "runs %s on Node 24, arm64, its route's timeout (10 s by default), X-Ray active, no source maps loaded at run time",
    (id) => {
      expect(functionProperties(template(), id)).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Timeout: id === functionId('listInventory') ? LIST_INVENTORY_TIMEOUT_SECONDS : 10,
        TracingConfig: { Mode: 'Active' },
        Handler: 'index.handler',
      });
      // `--enable-source-maps` would parse the map at every init and decode it at the first stack (docs/performance.md,
      // "Source maps"); the map ships in the asset and `npm run cli -- stack map` reads it (bundled-functions tests it).
      expect(functionEnvironment(template(), id).NODE_OPTIONS).toBeUndefined();
      expect(functionEnvironment(template(), id)).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'pet-store-inventory',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        // The tracer's DynamoDB subsegments (functions/observability/tracer.ts) under active tracing.
        POWERTOOLS_TRACE_ENABLED: 'true',
        // The `stage` dimension of every custom metric the alarms read.
        STAGE: stage,
      });
    },
  );

  it.each(FUNCTION_IDS)('gives %s a role of its own with no managed policies and only X-Ray on *', (id) => {
    const roleId = (functionProperties(template(), id).Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    expect(resourcesOfType(template(), 'AWS::IAM::Role')[roleId]?.ManagedPolicyArns).toBeUndefined();
    const wildcard = statementsOf(template(), id).filter((s) => s.Resource === '*');
    expect(wildcard.flatMap((s) => [s.Action].flat()).sort()).toEqual([
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
  });

  it('keeps the idempotency records 24 hours at most: TTL on their expiry, the key Powertools writes', () => {
    const tableId = logicalIdStartingWith(template(), 'AWS::DynamoDB::Table', 'IdempotencyTable');
    expect(resourcesOfType(template(), 'AWS::DynamoDB::Table')[tableId]).toMatchObject({
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
      SSESpecification: { SSEEnabled: true },
    });
    const writers = ['UpdateInventoryFunction', 'ApplyInventoryChangesFunction'];
    for (const id of writers)
      expect(functionEnvironment(template(), id)[ENV.idempotencyTable]).toEqual(
        tableRef(template(), 'IdempotencyTable'),
      );
    for (const id of FUNCTION_IDS.filter((functionName) => !writers.includes(functionName)))
      expect(functionEnvironment(template(), id)).not.toHaveProperty(ENV.idempotencyTable);
  });

  it('tells each function only the table names it uses', () => {
    const inventory = { [ENV.inventoryTable]: tableRef(template(), 'InventoryTable') };
    const tablesTold = (id: string) => {
      const environment = functionEnvironment(template(), id);
      const names = [ENV.inventoryTable, ENV.apiKeysTable, ENV.historyTable].filter((name) => name in environment);
      return Object.fromEntries(names.map((name) => [name, environment[name]]));
    };
    expect(Object.fromEntries(FUNCTION_IDS.map((id) => [id, tablesTold(id)]))).toEqual({
      ListInventoryFunction: { ...inventory, [ENV.historyTable]: tableRef(template(), 'HistoryTable') },
      ListInventoryChangesFunction: { [ENV.historyTable]: tableRef(template(), 'HistoryTable') },
      GetInventoryEntryFunction: inventory,
      UpdateInventoryFunction: inventory,
      ApplyInventoryChangesFunction: inventory,
      ListInventoryHistoryFunction: { ...inventory, [ENV.historyTable]: tableRef(template(), 'HistoryTable') },
      GetPetByIdFunction: {},
      ListStoreOrdersFunction: {},
      AuthorizerFunction: { [ENV.apiKeysTable]: tableRef(template(), 'ApiKeysTable') },
    });
  });

  it("paces the list to half the list index's read cap, and tells no other function a pace", () => {
    const cap = stage === 'production' ? 2000 : 500;
    expect(functionEnvironment(template(), 'ListInventoryFunction')[ENV.listReadUnitsPerSecond]).toBe(String(cap / 2));
    for (const id of FUNCTION_IDS.filter((functionName) => functionName !== 'ListInventoryFunction')) {
      expect(functionEnvironment(template(), id)).not.toHaveProperty(ENV.listReadUnitsPerSecond);
    }
  });

  it('tells the deprecated pets function its deprecation date and, with none configured, no sunset', () => {
    expect(functionEnvironment(template(), 'GetPetByIdFunction')[ENV.petsDeprecatedAt]).toBe(PETS_DEPRECATED_AT);
    expect(functionEnvironment(template(), 'GetPetByIdFunction')).not.toHaveProperty(ENV.petsSunsetAt);
  });
});

type AliasUpdatePolicy = { CodeDeployLambdaAliasUpdate: { DeploymentGroupName: { Ref: string } } };

describe.each(STAGES)('Roll-out of the %s stage', (stage) => {
  const template = () => synthesized().templates[stage];
  const resources = () => template().toJSON().Resources as Record<string, RawResource>;
  const aliasOf = (id: string) => {
    const aliasId = logicalIdStartingWith(template(), 'AWS::Lambda::Alias', id);
    return { aliasId, alias: resources()[aliasId] as RawResource };
  };
  const groupOf = (id: string) => {
    const groupRef = (aliasOf(id).alias.UpdatePolicy as AliasUpdatePolicy).CodeDeployLambdaAliasUpdate
      .DeploymentGroupName;
    return (resources()[groupRef.Ref] as RawResource).Properties;
  };

  it.each(FUNCTION_IDS)('publishes %s as a version behind the alias live', (id) => {
    const { alias } = aliasOf(id);
    const versionId = logicalIdStartingWith(template(), 'AWS::Lambda::Version', `${id}CurrentVersion`);
    expect(alias.Properties).toEqual({
      Name: 'live',
      FunctionName: { Ref: logicalIdStartingWith(template(), 'AWS::Lambda::Function', id) },
      FunctionVersion: { 'Fn::GetAtt': [versionId, 'Version'] },
    });
  });

  it.each(FUNCTION_IDS)(
    'moves the live alias of %s through CodeDeploy, rolling back on failure, stop or alarm',
    (id) => {
      expect(groupOf(id)).toMatchObject({
        DeploymentConfigName:
          stage === 'production'
            ? 'CodeDeployDefault.LambdaCanary10Percent5Minutes'
            : 'CodeDeployDefault.LambdaAllAtOnce',
        DeploymentStyle: { DeploymentType: 'BLUE_GREEN', DeploymentOption: 'WITH_TRAFFIC_CONTROL' },
        AutoRollbackConfiguration: {
          Enabled: true,
          Events: ['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM'],
        },
      });
    },
  );

  /**
   * Lambda reports an invocation through an alias under `FunctionName`, `Resource` (`name:alias`) and
   * `ExecutedVersion` ("Types of metrics for Lambda functions", dimensions:
   * https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html), so this alarm counts only the
   * version the deploy publishes; CodeDeploy stops and rolls back a deployment while one of its group's alarms is in
   * ALARM (https://docs.aws.amazon.com/codedeploy/latest/userguide/deployments-rollback-and-redeploy.html).
   */
  it.each(FUNCTION_IDS.filter((id) => id !== 'AuthorizerFunction'))(
    "gates %s's deploy on its new version's own crashes only, never on a stage-wide alarm",
    (id) => {
      const { alarms } = groupOf(id).AlarmConfiguration as { alarms?: unknown; Alarms: { Name: { Ref: string } }[] };
      expect(alarms).toBeUndefined();
      const alarm = resources()[
        only((groupOf(id).AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] }).Alarms).Name.Ref
      ]?.Properties as Record<string, unknown>;
      const fnRef = { Ref: logicalIdStartingWith(template(), 'AWS::Lambda::Function', id) };
      const versionId = logicalIdStartingWith(template(), 'AWS::Lambda::Version', `${id}CurrentVersion`);
      expect(alarm).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Statistic: 'Sum',
      });
      expect(alarm.Dimensions).toEqual([
        { Name: 'ExecutedVersion', Value: { 'Fn::GetAtt': [versionId, 'Version'] } },
        { Name: 'FunctionName', Value: fnRef },
        { Name: 'Resource', Value: { 'Fn::Join': ['', [fnRef, ':live']] } },
      ]);
      expect(alarm.AlarmActions).toBeUndefined();
      // As CloudWatch evaluates it (test/infra/alarm-evaluation.ts): one crash of the new version is ALARM in that
      // minute, which stops the deployment; no invocation at all (a quiet canary) is OK, never a stop.
      const evaluated = evaluatedAlarm(alarm);
      expect(evaluated.run([{ m: 1 }], 'OK')).toEqual(['ALARM']);
      expect(evaluated.run([{ m: 0 }], 'OK')).toEqual(['OK']);
      expect(evaluated.run(evaluated.quiet(), 'OK').at(-1)).toBe('OK');
      // Lambda's Errors come at a run's end stamped with its start, and CloudWatch takes them in up to 3 minutes later
      // (test/infra/data-and-monitoring.test.ts): a run cut off at its timeout still rolls the deploy back.
      const timeout = (resources()[fnRef.Ref]?.Properties as { Timeout?: number } | undefined)?.Timeout ?? 0;
      expect(timeout).toBeGreaterThan(0);
      const period = alarm.Period as number;
      const arrives = Math.floor((period - 1 + timeout + 180) / period);
      const busy = Array.from({ length: arrives + 1 }, () => ({ m: 0 }));
      expect(evaluated.run(busy, 'OK', [{ stamped: 0, arrives, data: { m: 1 } }])[arrives]).toBe('ALARM');
      if (id === 'ListInventoryFunction') expect(timeout).toBe(LIST_INVENTORY_TIMEOUT_SECONDS);
    },
  );

  /**
   * CloudWatch keeps an alarm's state when its configuration is updated (PutMetricAlarm: "When you update an existing
   * alarm, its state is left unchanged", https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html).
   * Were the gate one alarm whose ExecutedVersion moves, a live version's crash would leave it in ALARM when the
   * hotfix's deployment starts, and CodeDeploy stops a deployment whose alarm is in ALARM. A resource under a new
   * logical id is a new resource to CloudFormation, created in the update and the old one deleted at its cleanup
   * ("Update behaviors of stack resources",
   * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/using-cfn-updating-stacks-update-behaviors.html):
   * a new alarm starts in INSUFFICIENT_DATA, so a hotfix starts with a gate that has seen nothing but its own version.
   */
  it('gives a function a new gate alarm with each new version, the group pointing at it; the other gates stay', () => {
    // Prepare: the same app, but the list function's configuration changed (a new version of it).
    const gates = (t: Template) => {
      const all = t.toJSON().Resources as Record<string, RawResource>;
      return Object.fromEntries(
        FUNCTION_IDS.map((id) => {
          const alias = all[logicalIdStartingWith(t, 'AWS::Lambda::Alias', id)] as RawResource;
          const groupId = (alias.UpdatePolicy as AliasUpdatePolicy).CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref;
          const { Alarms } = (all[groupId] as RawResource).Properties.AlarmConfiguration as {
            Alarms: { Name: { Ref: string } }[];
          };
          return [id, only(Alarms).Name.Ref];
        }),
      );
    };
    const built = buildApp();
    try {
      const stack = built.stacks[stage];
      const list = stack.node
        .findAll()
        .find((c): c is LambdaFunction => c instanceof LambdaFunction && c.node.id === 'ListInventoryFunction');
      if (!list) throw new Error('no ListInventoryFunction');
      list.addEnvironment('A_CHANGE', 'new version');
      built.app.synth();
      const before = gates(template());
      const after = gates(Template.fromStack(stack));
      // Assess: a new alarm for the changed function, each alarm a resource of the template, the others unchanged.
      expect(after.ListInventoryFunction).not.toBe(before.ListInventoryFunction);
      expect(after.ListInventoryFunction).toMatch(/^RolloutListInventoryNewVersionErrorsAlarm/);
      const resources = Template.fromStack(stack).toJSON().Resources as Record<string, RawResource>;
      for (const alarmId of Object.values(after)) expect(resources[alarmId]?.Type).toBe('AWS::CloudWatch::Alarm');
      expect(resources[before.ListInventoryFunction as string]).toBeUndefined();
      for (const id of Object.keys(before).filter((id) => id !== 'ListInventoryFunction'))
        expect({ id, alarm: after[id] }).toEqual({ id, alarm: before[id] });
    } finally {
      rmSync(built.outdir, { recursive: true, force: true });
    }
  });

  /**
   * CloudFormation creates or updates a resource only after those in its DependsOn ("DependsOn attribute",
   * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-dependson.html): the group, pointed at
   * the new version's gate, is updated before the alias update that starts the CodeDeploy deployment.
   */
  it.each(FUNCTION_IDS)('updates the deployment group of %s before its live alias', (id) => {
    const { alias } = aliasOf(id);
    const groupRef = (alias.UpdatePolicy as AliasUpdatePolicy).CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref;
    expect((alias as RawResource & { DependsOn?: string[] }).DependsOn).toContain(groupRef);
  });

  /**
   * The authorizer's Lambda `Errors` count refused keys (a thrown `Unauthorized`), so its gate reads, for the version
   * being deployed: its own AuthorizerUnavailable (functions/observability/metrics.ts, countForThisVersion); Lambda's
   * Duration, whose largest is the timeout for a run cut off there, and Errors against Invocations ("Types of metrics
   * for Lambda functions", https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html: ExecutedVersion
   * for invocations through an alias). Each period below is what that version would send.
   */
  describe("the authorizer's deploy gate", () => {
    const gate = () => {
      const group = groupOf('AuthorizerFunction');
      expect(group.AlarmConfiguration).toMatchObject({ Enabled: true });
      const alarmId = only((group.AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] }).Alarms).Name.Ref;
      expect(alarmId).toMatch(/^RolloutAuthorizerNewVersionFaultsAlarm[0-9A-F]{8}V[0-9A-F]{8}$/);
      return resources()[alarmId]?.Properties as Record<string, unknown>;
    };
    /** A period of the new version: `invocations` runs, `errors` of them failed (refusals included). */
    const period = (invocations: number, errors: number, extra: { unavailable?: number; duration?: number } = {}) => ({
      invocations,
      errors,
      duration: extra.duration ?? 40,
      ...(extra.unavailable !== undefined && { unavailable: extra.unavailable }),
    });
    const timeoutMs = AUTHORIZER_TIMEOUT_SECONDS * 1000;

    it('reads only the new version: its own AuthorizerUnavailable, and its Lambda metrics through live', () => {
      const versionId = logicalIdStartingWith(template(), 'AWS::Lambda::Version', 'AuthorizerFunctionCurrentVersion');
      const version = { 'Fn::GetAtt': [versionId, 'Version'] };
      const queries = gate().Metrics as {
        Id: string;
        MetricStat?: { Metric: { MetricName: string; Dimensions: unknown[] } };
      }[];
      const byId = Object.fromEntries(queries.flatMap((q) => (q.MetricStat ? [[q.Id, q.MetricStat.Metric]] : [])));
      expect(Object.keys(byId).sort()).toEqual(['duration', 'errors', 'invocations', 'unavailable']);
      expect(byId.unavailable).toMatchObject({
        Namespace: 'PetStoreInventory',
        MetricName: 'AuthorizerUnavailable',
        Dimensions: [
          { Name: 'service', Value: 'pet-store-inventory' },
          { Name: 'stage', Value: stage },
          { Name: 'version', Value: version },
        ],
      });
      for (const id of ['duration', 'errors', 'invocations'])
        expect(byId[id]?.Dimensions).toContainEqual({ Name: 'ExecutedVersion', Value: version });
    });

    it('rolls back a version that could not check a key, ran into its time-out, or failed every one of its runs', () => {
      const evaluated = evaluatedAlarm(gate());
      const faulty = {
        'could not check one key': period(10, 1, { unavailable: 1 }),
        'ran into its time-out once': period(5, 1, { duration: timeoutMs }),
        'cannot start (every run an init or import error)': period(
          AUTHORIZER_ALL_FAILED_INVOCATIONS,
          AUTHORIZER_ALL_FAILED_INVOCATIONS,
        ),
        'refuses every key, valid ones too': period(8, 8),
      };
      for (const [what, data] of Object.entries(faulty))
        expect({ what, state: evaluated.run([data], 'OK').at(-1) }).toEqual({ what, state: 'ALARM' });
    });

    it("lets a healthy version through: a few refused keys, even a period of only refusals fewer than the gate's count", () => {
      const evaluated = evaluatedAlarm(gate());
      const healthy = [
        period(10, 2),
        period(AUTHORIZER_ALL_FAILED_INVOCATIONS - 1, AUTHORIZER_ALL_FAILED_INVOCATIONS - 1),
        period(1, 0),
      ];
      expect(evaluated.run(healthy, 'OK')).toEqual(['OK', 'OK', 'OK']);
      expect(evaluated.run(evaluated.quiet(), 'ALARM').at(-1)).toBe('OK');
    });

    // Lambda stamps a run's metrics with its start and sends them at its end; CloudWatch takes them in up to 3 minutes
    // later (test/infra/data-and-monitoring.test.ts).
    it('still sees a time-out whose points arrive after the timeout and a 3-minute publishing delay', () => {
      const properties = gate();
      const evaluated = evaluatedAlarm(properties);
      const seconds = (properties.Metrics as { MetricStat?: { Period: number } }[]).find((q) => q.MetricStat)
        ?.MetricStat?.Period as number;
      const arrives = Math.floor((seconds - 1 + AUTHORIZER_TIMEOUT_SECONDS + 180) / seconds);
      const busy = Array.from({ length: arrives + 1 }, () => period(4, 0));
      const late = [{ stamped: 0, arrives, data: { invocations: 1, errors: 1, duration: timeoutMs } }];
      expect(evaluated.run(busy, 'OK', late).slice(arrives)).toEqual(['ALARM']);
    });
  });

  /**
   * "AppSpec 'hooks' section for an AWS Lambda deployment"
   * (https://docs.aws.amazon.com/codedeploy/latest/userguide/reference-appspec-file-structure-hooks.html): a
   * BeforeAllowTraffic hook runs before any traffic moves to the new version, and the deployment goes on only when
   * the hook reports Succeeded with PutLifecycleEventHookExecutionStatus.
   */
  it.each(FUNCTION_IDS)('runs the pre-traffic hook on the new version of %s before the alias takes traffic', (id) => {
    const hookRef = { Ref: logicalIdStartingWith(template(), 'AWS::Lambda::Function', 'PreTrafficHookFunction') };
    const update = (aliasOf(id).alias.UpdatePolicy as { CodeDeployLambdaAliasUpdate: Record<string, unknown> })
      .CodeDeployLambdaAliasUpdate;
    expect(update.BeforeAllowTrafficHook).toEqual(hookRef);
    const fnId = logicalIdStartingWith(template(), 'AWS::Lambda::Function', id);
    const probes = functionEnvironment(template(), 'PreTrafficHookFunction')[ENV.preTrafficTargets];
    expect(JSON.stringify(probes)).toContain(fnId);
  });

  it("gives the pre-traffic hook a timeout past its check's deadline and the margin kept to report the verdict", () => {
    const timeout = functionProperties(template(), 'PreTrafficHookFunction').Timeout as number;
    expect(timeout).toBe(PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS);
    expect(timeout * 1000).toBeGreaterThanOrEqual(PRE_TRAFFIC_DEADLINE_MS + PRE_TRAFFIC_REPORT_MARGIN_SECONDS * 1000);
    expect(PRE_TRAFFIC_REPORT_MARGIN_SECONDS).toBeGreaterThan(0);
  });
});
