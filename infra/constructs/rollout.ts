import { Validations } from 'aws-cdk-lib';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { TrafficShifting } from '../stage-config';

/** Properties of an {@link InventoryRollout}. */
export interface InventoryRolloutProps {
  /** Each function's `live` alias and the alarms that roll its deploy back, by a readable name. */
  functions: ReadonlyMap<string, { alias: Alias; rollbackAlarms: readonly IAlarm[] }>;
  trafficShifting: TrafficShifting;
}

/** The AWS managed policy CodeDeploy needs to shift Lambda aliases (CDK attaches it to every Lambda group's role). */
export const CODEDEPLOY_LAMBDA_POLICY = 'service-role/AWSCodeDeployRoleForLambdaLimited';

/**
 * Every function's `live` alias moves to the new version through CodeDeploy: one application, one deployment group
 * per function, all with the stage's traffic shifting, automatic rollback when a deployment fails, is stopped, or
 * one of its alarms fires while traffic shifts. A rolled-back deployment fails the CloudFormation update, which
 * then rolls every other alias back too.
 */
export class InventoryRollout extends Construct {
  readonly application: LambdaApplication;
  readonly groups = new Map<string, LambdaDeploymentGroup>();

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
    const deploymentConfig = LambdaDeploymentConfig[props.trafficShifting];
    for (const [name, { alias, rollbackAlarms }] of props.functions) {
      const pascal = name.charAt(0).toUpperCase() + name.slice(1);
      this.groups.set(
        name,
        new LambdaDeploymentGroup(this, `${pascal}DeploymentGroup`, {
          application: this.application,
          alias,
          deploymentConfig,
          role,
          alarms: [...rollbackAlarms],
          autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
        }),
      );
    }
  }
}
