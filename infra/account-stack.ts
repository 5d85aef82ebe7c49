import { CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { accountStackName } from '../service/names';

/** Properties of an {@link ApiGatewayAccountStack}. */
export interface ApiGatewayAccountStackProps extends Omit<StackProps, 'env' | 'stackName'> {
  /** The account and region whose API Gateway setting this stack owns. */
  env: { account: string; region: string };
}

/** The AWS managed policy API Gateway documents for its CloudWatch role. */
export const API_GATEWAY_LOGS_POLICY = 'service-role/AmazonAPIGatewayPushToCloudWatchLogs';

/**
 * API Gateway's account-level CloudWatch Logs role (`AWS::ApiGateway::Account`), once per account and region. A stage
 * with access or execution logging cannot be created until this is set, and the setting is a singleton: both stages
 * depend on this one stack instead of each setting it (the last writer would win).
 *
 * Role and setting are retained when the stack is deleted: other APIs of the account may log through them, and
 * deleting the role would break the logging of every stage in the region.
 */
export class ApiGatewayAccountStack extends Stack {
  readonly cloudWatchRole: Role;

  constructor(scope: Construct, id: string, props: ApiGatewayAccountStackProps) {
    super(scope, id, {
      ...props,
      stackName: accountStackName(props.env.region),
      description: 'Pet store inventory: API Gateway CloudWatch Logs role of this account and region',
    });

    this.cloudWatchRole = new Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: 'Lets API Gateway write access and execution logs of the REST APIs in this region',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName(API_GATEWAY_LOGS_POLICY)],
    });
    this.cloudWatchRole.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(this.cloudWatchRole).acknowledge({
      id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${API_GATEWAY_LOGS_POLICY}]`,
      reason:
        'AmazonAPIGatewayPushToCloudWatchLogs is the policy API Gateway documents for its account-level CloudWatch ' +
        'role. The role serves every REST API of the account in this region, each writing to log groups API ' +
        'Gateway names itself (API-Gateway-Execution-Logs_<api-id>/<stage>), so it cannot name them in advance.',
    });

    const account = new CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: this.cloudWatchRole.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);

    new CfnOutput(this, 'ApiGatewayCloudWatchRoleArn', {
      value: this.cloudWatchRole.roleArn,
      description: 'The role API Gateway writes logs with in this account and region',
    });
  }
}
