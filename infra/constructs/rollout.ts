import { createHash } from 'node:crypto';
import { type CfnElement, type Duration, Lazy, Stack, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  type CfnAlarm,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import {
  METRIC_NAMES,
  METRICS_NAMESPACE,
  SERVICE_NAME,
  STAGE_DIMENSION,
  VERSION_DIMENSION,
} from '../../service/metric-names';
import { AUTHORIZER_HANDLER, AUTHORIZER_TIMEOUT_SECONDS } from '../../service/routes';
import type { TrafficShifting } from '../stage-config';
import { type InventoryFunction, pascalCase } from './inventory-function';
import { lambdaEventEvaluation } from './monitoring';

/** Properties of an {@link InventoryRollout}. */
export interface InventoryRolloutProps {
  /** Each function behind a `live` alias, by a readable name. */
  functions: ReadonlyMap<string, InventoryFunction>;
  /** The stage name: the `stage` dimension of the functions' own metrics. */
  stageName: string;
  trafficShifting: TrafficShifting;
  /** Period of the new versions' error alarms (the stage's alarm period). */
  period: Duration;
  /** CodeDeploy's BeforeAllowTraffic hook of every group. */
  preTrafficHook: IFunction;
}

/**
 * Invocations of the new authorizer version in one period, every one failed, that mean it cannot start or refuses
 * every key: fewer could be clients' unknown keys (docs/deploying.md, AuthorizerNewVersionFaultsAlarm).
 */
export const AUTHORIZER_ALL_FAILED_INVOCATIONS = 3;

/** A Duration this close to the authorizer's timeout is a run into it (a timed-out run reports its timeout). */
const AUTHORIZER_TIMED_OUT_SHARE = 0.9;

/** The Lambda metric dimensions of the version being deployed, invoked through `live`. */
function versionDimensions(fn: InventoryFunction): Record<string, string> {
  return {
    FunctionName: fn.functionName,
    Resource: `${fn.functionName}:${fn.live.aliasName}`,
    ExecutedVersion: fn.currentVersion.version,
  };
}

/**
 * The new authorizer version's faults in a period: keys it could not check (its own `AuthorizerUnavailable` by
 * version), a run into its time-out (Lambda `Duration`), and every one of at least
 * {@link AUTHORIZER_ALL_FAILED_INVOCATIONS} invocations failed (Lambda `Errors` against `Invocations`, one pipeline).
 */
function authorizerFaults(fn: InventoryFunction, { stageName, period }: InventoryRolloutProps): MathExpression {
  const dimensionsMap = versionDimensions(fn);
  const timedOutMs = AUTHORIZER_TIMEOUT_SECONDS * 1000 * AUTHORIZER_TIMED_OUT_SHARE;
  return new MathExpression({
    expression:
      `FILL(unavailable, 0) + (FILL(duration, 0) >= ${timedOutMs}) + ` +
      `(FILL(invocations, 0) >= ${AUTHORIZER_ALL_FAILED_INVOCATIONS}) * (FILL(errors, 0) >= FILL(invocations, 0))`,
    usingMetrics: {
      unavailable: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: METRIC_NAMES.authorizerUnavailable,
        dimensionsMap: {
          service: SERVICE_NAME,
          [STAGE_DIMENSION]: stageName,
          [VERSION_DIMENSION]: dimensionsMap.ExecutedVersion as string,
        },
        statistic: 'Sum',
        period,
      }),
      duration: fn.metricDuration({ dimensionsMap, statistic: 'Maximum', period }),
      invocations: fn.metricInvocations({ dimensionsMap, period }),
      errors: fn.metricErrors({ dimensionsMap, period }),
    },
    label: 'New authorizer version: faults',
    period,
  });
}

/** The AWS managed policy CodeDeploy needs to shift Lambda aliases (CDK attaches it to every Lambda group's role). */
const CODEDEPLOY_LAMBDA_POLICY = 'service-role/AWSCodeDeployRoleForLambdaLimited';

/**
 * Each `live` alias moves to its new version through CodeDeploy, gated by the pre-traffic hook and that version's own
 * alarm; a deployment that fails, is stopped or alarms rolls back (docs/deploying.md, "What a deploy does").
 */
export class InventoryRollout extends Construct {
  readonly application: LambdaApplication;

  constructor(scope: Construct, id: string, props: InventoryRolloutProps) {
    super(scope, id);
    this.application = new LambdaApplication(this, 'Application');
    const role = new Role(this, 'DeployRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description: 'Lets CodeDeploy shift the live aliases of the pet store inventory functions',
    });
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${CODEDEPLOY_LAMBDA_POLICY}]`,
      reason:
        'CDK attaches AWSCodeDeployRoleForLambdaLimited to every Lambda deployment group role: the AWS managed ' +
        'policy scoped to what a Lambda deployment does (read alarms, read and update aliases, read AppSpec objects ' +
        'under CodeDeploy/ or tagged for it, invoke only hook functions named CodeDeployHook_*); the role serves ' +
        "this stage's deployment groups only.",
    });
    const hookId = Stack.of(this).getLogicalId(props.preTrafficHook.node.defaultChild as CfnElement);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${hookId}.Arn>:*]`,
      reason:
        "CDK grants a deployment group's role lambda:InvokeFunction on its pre-traffic hook and the hook's versions " +
        '(`name:*`); the hook is invoked unqualified, and it is the only function this grant names.',
    });
    const deploymentConfig = LambdaDeploymentConfig[props.trafficShifting];
    for (const [name, fn] of props.functions) {
      const group = new LambdaDeploymentGroup(this, `${pascalCase(name)}DeploymentGroup`, {
        application: this.application,
        alias: fn.live,
        deploymentConfig,
        role,
        alarms: [this.newVersionAlarm(name, fn, props)],
        preHook: props.preTrafficHook,
        autoRollback: { stoppedDeployment: true },
      });
      // The alias's CodeDeploy update policy names the group; the dependency is also made explicit, so the group
      // (and its new gate, see versionAlarm) is updated before the alias starts a deployment.
      fn.live.node.addDependency(group);
    }
  }

  /**
   * The gate of the version this deploy publishes: its Lambda `Errors` through `live` by `ExecutedVersion` (the old
   * version's are not counted); the authorizer's refused keys are thrown errors, so its gate has signals of its own.
   */
  private newVersionAlarm(name: string, fn: InventoryFunction, props: InventoryRolloutProps): Alarm {
    const { period } = props;
    const evaluationPeriods = lambdaEventEvaluation(fn, period).evaluationPeriods;
    if (name === AUTHORIZER_HANDLER) {
      const id = `${pascalCase(name)}NewVersionFaultsAlarm`;
      const what = 'could not check keys, ran into its time-out, or failed every invocation';
      return this.versionAlarm(id, fn, authorizerFaults(fn, props), evaluationPeriods, { what, runbook: id });
    }
    return this.versionAlarm(
      `${pascalCase(name)}NewVersionErrorsAlarm`,
      fn,
      fn.metricErrors({ dimensionsMap: versionDimensions(fn), period }),
      evaluationPeriods,
      { what: 'crashed or timed out', runbook: '<Function>NewVersionErrorsAlarm' },
    );
  }

  /**
   * A gate of one version, with a logical ID of its own: an updated alarm keeps its state (PutMetricAlarm), so a reused
   * gate in ALARM would roll the hotfix back (docs/deploying.md, "What a deploy does": the gate alarm).
   */
  private versionAlarm(
    id: string,
    fn: InventoryFunction,
    metric: IMetric,
    evaluationPeriods: number,
    text: { what: string; runbook: string },
  ): Alarm {
    const alarm = new Alarm(this, id, {
      metric,
      threshold: 1,
      evaluationPeriods,
      datapointsToAlarm: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription:
        `The version being deployed ${text.what} while CodeDeploy shifted traffic to it: the deploy rolls ` +
        `back. Runbook: docs/deploying.md, "Alarm runbooks", ${text.runbook}.`,
    });
    const stack = Stack.of(this);
    const cfnAlarm = alarm.node.defaultChild as CfnAlarm;
    const alarmId = stack.resolve(cfnAlarm.logicalId) as string;
    const versionId = (fn.currentVersion.node.defaultChild as CfnElement).logicalId;
    // The version's logical id carries the hash of the function's code and configuration (CDK's currentVersion); it
    // is only known once the stack is synthesized, hence the lazy value.
    cfnAlarm.overrideLogicalId(
      Lazy.uncachedString({
        produce: () =>
          `${alarmId}V${createHash('sha256')
            .update(String(stack.resolve(versionId)))
            .digest('hex')
            .slice(0, 8)
            .toUpperCase()}`,
      }),
    );
    return alarm;
  }
}
