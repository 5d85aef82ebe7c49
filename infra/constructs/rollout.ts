import { createHash } from 'node:crypto';
import { type CfnElement, type Duration, Lazy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, type CfnAlarm, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, SERVICE_NAME, STAGE_DIMENSION, VERSION_DIMENSION } from '../../service/metric-names';
import type { TrafficShifting } from '../stage-config';
import { type InventoryFunction, pascalCase } from './inventory-function';
import { lambdaEventEvaluation } from './monitoring';

/** Properties of an {@link InventoryRollout}. */
export interface InventoryRolloutProps {
  /** Each function behind a `live` alias, by a readable name. */
  functions: ReadonlyMap<string, InventoryFunction>;
  /**
   * By function name, where its Lambda `Errors` are no fault (the authorizer's refused keys are thrown `Unauthorized`
   * errors): the count of its own faults it emits per version (service/metric-names.ts, with the `version` dimension).
   */
  faultMetrics: Readonly<Record<string, string>>;
  /** The stage name: the `stage` dimension of the functions' own metrics. */
  stageName: string;
  trafficShifting: TrafficShifting;
  /** Period of the new versions' error alarms (the stage's alarm period). */
  period: Duration;
  /**
   * CodeDeploy's BeforeAllowTraffic hook: invokes each new version with a safe request before any traffic
   * moves to it, and fails the deployment if it answers wrong.
   */
  preTrafficHook: IFunction;
}

/** The AWS managed policy CodeDeploy needs to shift Lambda aliases (CDK attaches it to every Lambda group's role). */
const CODEDEPLOY_LAMBDA_POLICY = 'service-role/AWSCodeDeployRoleForLambdaLimited';

/**
 * Every function's `live` alias moves to the new version through CodeDeploy: one application, one deployment group
 * per function, all with the stage's traffic shifting. Before any traffic moves, the pre-traffic hook invokes the
 * new version; while traffic shifts, the group watches only the new version's own alarm (its Lambda `Errors` as
 * executed through the alias, by `ExecutedVersion`, or its own count of faults by `version`), so an incident of the
 * old version or of the stage never blocks a deploy, the hotfix included; the stage-wide alarms page. A deployment
 * that fails, is stopped, or whose alarm fires is rolled back, which fails the CloudFormation update and rolls every
 * other alias back too.
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
        alarms: [this.newVersionAlarm(name, fn, props.faultMetrics[name], props.stageName, props.period)],
        preHook: props.preTrafficHook,
        autoRollback: { stoppedDeployment: true },
      });
      // The alias's CodeDeploy update policy names the group; the dependency is also made explicit, so the group
      // (and its new gate, see versionAlarm) is updated before the alias starts a deployment.
      fn.live.node.addDependency(group);
    }
  }

  /**
   * The gate of the version this deploy publishes. By default its Lambda `Errors` invoked through the `live` alias:
   * Lambda reports alias invocations by `FunctionName`, `Resource` (`name:alias`) and `ExecutedVersion`, so the old
   * version's errors during the canary are not counted, and a function whose timeout is longer than a period is read
   * back past it ({@link lambdaEventEvaluation}). With a `faultMetric`, the function's own count of faults as that
   * version emits it (its `version` dimension).
   */
  private newVersionAlarm(
    name: string,
    fn: InventoryFunction,
    faultMetric: string | undefined,
    stageName: string,
    period: Duration,
  ): Alarm {
    const version = fn.currentVersion.version;
    if (faultMetric) {
      const id = `${pascalCase(name)}NewVersionUnavailableAlarm`;
      const metric = new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: faultMetric,
        dimensionsMap: { service: SERVICE_NAME, [STAGE_DIMENSION]: stageName, [VERSION_DIMENSION]: version },
        statistic: 'Sum',
        period,
      });
      return this.versionAlarm(id, fn, metric, 1, { what: `counted ${faultMetric}`, runbook: id });
    }
    const metric = new Metric({
      namespace: 'AWS/Lambda',
      metricName: 'Errors',
      dimensionsMap: {
        FunctionName: fn.functionName,
        Resource: `${fn.functionName}:${fn.live.aliasName}`,
        ExecutedVersion: version,
      },
      statistic: 'Sum',
      period,
    });
    return this.versionAlarm(
      `${pascalCase(name)}NewVersionErrorsAlarm`,
      fn,
      metric,
      lambdaEventEvaluation(fn, period).evaluationPeriods,
      { what: 'crashed or timed out', runbook: '<Function>NewVersionErrorsAlarm' },
    );
  }

  /**
   * A gate of one version: in ALARM from its first bad point among the last `evaluationPeriods`.
   *
   * Each version gets an alarm of its own, not the same alarm with new dimensions: CloudWatch keeps an alarm's state
   * when its configuration is updated (PutMetricAlarm: "When you update an existing alarm, its state is left
   * unchanged", https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html). After the
   * deploy, the alarm goes on watching the live version; if that version fails, the alarm is in ALARM, and an
   * updated alarm would still be in ALARM when the hotfix's deployment starts, so CodeDeploy would roll the hotfix
   * back. A logical id that follows the version's makes CloudFormation create a new alarm (INSUFFICIENT_DATA until
   * its first evaluation), point the deployment group at it before the alias moves, and delete the old one when the
   * update completes. A deploy that leaves the function's version as it is keeps its alarm.
   */
  private versionAlarm(
    id: string,
    fn: InventoryFunction,
    metric: Metric,
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
