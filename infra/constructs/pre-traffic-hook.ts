import { Arn, ArnFormat, type CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { LambdaApplication } from 'aws-cdk-lib/aws-codedeploy';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { ENV } from '../../functions/config';
import { PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS, type ProbeTarget } from '../../functions/deploy/pre-traffic';
import { InventoryFunction, type InventoryFunctionProps } from './inventory-function';
import { STACK_STATUS_ACTIONS } from './self-check';

/** One function the hook probes, and the safe request it sends. */
export interface PreTrafficTarget {
  function: InventoryFunction;
  probe: ProbeTarget;
}

/** Properties of a {@link PreTrafficHook}. */
export interface PreTrafficHookProps extends Pick<InventoryFunctionProps, 'logRetention' | 'logRemovalPolicy'> {
  /** Every function behind a `live` alias. */
  targets: readonly PreTrafficTarget[];
  /** Where the authorizer's probe writes its short-lived write and read keys, and deletes them. */
  apiKeysTable: ITable;
}

/**
 * CodeDeploy's BeforeAllowTraffic hook of every deployment group: invokes each new version with a safe request before
 * it takes traffic (docs/deploying.md, "What a deploy does"); {@link allowVerdicts} grants what it does.
 */
export class PreTrafficHook extends InventoryFunction {
  private readonly targets: readonly InventoryFunction[];

  constructor(scope: Construct, id: string, props: PreTrafficHookProps) {
    const stack = Stack.of(scope);
    super(scope, id, {
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      handler: 'pre-traffic-hook',
      description:
        'CodeDeploy BeforeAllowTraffic hook: invokes each new version with a safe request before it takes traffic',
      // Past the check's deadline, so a hung probe is still reported Failed.
      timeout: Duration.seconds(PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS),
      environment: {
        // Its own stack, whose status tells a rollback (functions/deploy/stack-status.ts).
        [ENV.stackId]: stack.stackId,
        [ENV.apiKeysTable]: props.apiKeysTable.tableName,
        [ENV.preTrafficTargets]: stack.toJsonString(
          Object.fromEntries(props.targets.map((target) => [target.function.functionName, target.probe])),
        ),
      },
    });
    this.targets = props.targets.map((target) => target.function);
    // A new authorizer version must allow a valid key: keys that live for one probe, as the self-check's do; a key
    // kept in a secret would be a standing credential of the stage. Nothing else on the table, not even a read.
    props.apiKeysTable.grant(this, 'dynamodb:PutItem', 'dynamodb:DeleteItem');
  }

  /**
   * Grants what the hook does once CodeDeploy calls it (its probe keys are granted at construction): read its stack's status, invoke the versions it checks, read
   * which version a deployment moves, and report its verdict to the deployment groups of `application`.
   */
  allowVerdicts(application: LambdaApplication): void {
    const stack = Stack.of(this);
    const role = this.role as Role;
    for (const fn of this.targets) {
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(fn.node.defaultChild as CfnElement)}.Arn>:*]`,
        reason:
          'The pre-traffic hook invokes the version a deployment moves the live alias to (`name:<version>`), ' +
          "which is only known when CodeDeploy runs: every version (and the live alias, which IAM's * also matches) " +
          "of the stage's own functions, nothing else.",
      });
    }
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:${stack.partition}:codedeploy:${stack.region}:${stack.account}:deploymentgroup:<${stack.getLogicalId(application.node.defaultChild as CfnElement)}>/*]`,
      reason:
        'The hook reports its verdict for the deployment group that called it: ' +
        "the deployment groups of this stage's CodeDeploy application only (naming each would make a cycle: the " +
        'groups name the hook).',
    });
    // Its stack's status, asked only after a failed probe: a rollback's probes of the versions it restores only warn.
    this.addToRolePolicy(new PolicyStatement({ actions: [...STACK_STATUS_ACTIONS], resources: [stack.stackId] }));
    this.addToRolePolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        // The hook invokes only the version a deployment moves to (`name:<version>`, known when CodeDeploy runs).
        // `name:*` allows every qualifier, the `live` alias clients use included: IAM has no versions-only pattern.
        resources: this.targets.map((fn) => `${fn.functionArn}:*`),
      }),
    );
    // The Service Authorization Reference lists no resource type for these reads, CodeDeploy's permissions reference
    // names the deployment group: only `*` holds on both, and a grant that fails would roll every deploy back.
    this.addToRolePolicy(
      new PolicyStatement({
        actions: ['codedeploy:ListDeploymentTargets', 'codedeploy:GetDeploymentTarget'],
        resources: ['*'],
      }),
    );
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'codedeploy:ListDeploymentTargets and GetDeploymentTarget support no resource-level permissions (Service ' +
        'Authorization Reference, AWS CodeDeploy): read-only, they tell which function and version a deployment moves.',
    });
    // The verdict as AWS SAM's documented hook policy grants it: on the application's deployment groups (the Service
    // Authorization Reference lists no resource type for it either; a first real deploy settles it: npm run integ).
    this.addToRolePolicy(
      new PolicyStatement({
        actions: ['codedeploy:PutLifecycleEventHookExecutionStatus'],
        resources: [
          Arn.format(
            {
              service: 'codedeploy',
              resource: 'deploymentgroup',
              resourceName: `${application.applicationName}/*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            },
            stack,
          ),
        ],
      }),
    );
  }
}
