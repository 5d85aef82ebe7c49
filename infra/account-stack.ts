import { CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { accountStackName } from '../service/names';

export interface ApiGatewayAccountStackProps extends Omit<StackProps, 'env' | 'stackName'> {
  /** The account and region whose API Gateway setting this stack owns. */
  env: { account: string; region: string };
}

/** The AWS managed policy API Gateway documents for its CloudWatch role. */
const API_GATEWAY_LOGS_POLICY = 'service-role/AmazonAPIGatewayPushToCloudWatchLogs';

/**
 * API Gateway's CloudWatch Logs role, one per account and region: the stages there share it, and it is retained on
 * deletion, since other APIs may log through it (docs/deploying.md, "Before the first deploy").
 */
export class ApiGatewayAccountStack extends Stack {
  constructor(scope: Construct, id: string, props: ApiGatewayAccountStackProps) {
    super(scope, id, {
      ...props,
      stackName: accountStackName(props.env.region),
      description: 'Pet store inventory: API Gateway CloudWatch Logs role of this account and region',
    });

    const cloudWatchRole = new Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: 'Lets API Gateway write access and execution logs of the REST APIs in this region',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName(API_GATEWAY_LOGS_POLICY)],
    });
    cloudWatchRole.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(cloudWatchRole).acknowledge({
      id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${API_GATEWAY_LOGS_POLICY}]`,
      reason:
        'The policy API Gateway documents for its account-level role, which serves every REST API of the region, ' +
        'writing to log groups API Gateway names itself: it cannot name them in advance.',
    });

    const account = new CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: cloudWatchRole.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);

    new CfnOutput(this, 'ApiGatewayCloudWatchRoleArn', {
      value: cloudWatchRole.roleArn,
      description: 'The role API Gateway writes logs with in this account and region',
    });
  }
}
