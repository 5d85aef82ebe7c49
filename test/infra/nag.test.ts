import { rmSync } from 'node:fs';
import { CloudFormationValidatePlugin, Stack, Validations } from 'aws-cdk-lib';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { CloudAssembly } from 'aws-cdk-lib/cx-api';
import type { IConstruct } from 'constructs';
import { buildApp, synthesizeBeforeAll } from './synth';

const synthesized = synthesizeBeforeAll();

interface Acknowledgement {
  id: string;
  reason: string;
  path: string;
}

/** Every `Validations.of(x).acknowledge()` in the app (id without its `Namespace::`), with its construct. */
function acknowledgements(root: IConstruct): Acknowledgement[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
      .map(([id, reason]) => ({ id: id.replace(/^\w+::/, ''), reason, path: construct.node.path })),
  );
}

describe('cdk-nag AwsSolutions checks', () => {
  it('leaves no unacknowledged finding in either stage', () => {
    const findings = synthesized().validationReport.pluginReports.flatMap((report) =>
      (report.violations ?? []).map((violation) => `${report.pluginName}: ${violation.ruleName}`),
    );
    expect(findings).toEqual([]);
  });

  it('acknowledges only the reviewed findings, each with a written reason', () => {
    const acks = acknowledgements(synthesized().app);
    expect([...new Set(acks.map((ack) => ack.id))].sort()).toEqual([
      'AwsSolutions-APIG2',
      'AwsSolutions-APIG3',
      'AwsSolutions-COG4',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'AwsSolutions-IAM5[Resource::*]',
      // The pre-traffic hook invokes each function's new version (`name:<version>`) and reports to its own
      // CodeDeploy application's groups; CodeDeploy's role invokes the hook (what CDK's preHook grants).
      'AwsSolutions-IAM5[Resource::<ApplyInventoryChangesFunction23DE8013.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<AuthorizerFunctionB4DBAA43.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<GetInventoryEntryFunction7FBF0032.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<GetPetByIdFunction2378D4F4.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<HistoryFunction20D4D2CA.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<ListInventoryChangesFunctionA2DB0263.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<ListInventoryFunction23564031.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<ListInventoryHistoryFunction755ED507.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<ListStoreOrdersFunction9C42BF96.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<PreTrafficHookFunction189BE6A3.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<UpdateInventoryFunctionE48FE970.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<WebhooksPublisherFunctionFE711206.Arn>:*]',
      'AwsSolutions-IAM5[Resource::arn:aws:codedeploy:eu-west-1:000000000000:deploymentgroup:<RolloutApplication23995D4D>/*]',
      'AwsSolutions-SQS3',
    ]);
    for (const ack of acks) expect(ack.reason.length).toBeGreaterThan(80);
  });

  it('needs no acknowledgement for execution logging (APIG6): the account stack makes ERROR logging possible', () => {
    expect(acknowledgements(synthesized().app).filter((ack) => ack.id.startsWith('AwsSolutions-APIG6'))).toEqual([]);
  });

  it('acknowledges the missing web ACL (APIG3) on the staging stage only: production has one', () => {
    const apig3 = acknowledgements(synthesized().app).filter((ack) => ack.id === 'AwsSolutions-APIG3');
    expect(apig3.map((ack) => ack.path)).toEqual(['PetStoreInventory-staging/InventoryApi/Api/DeploymentStage.v1']);
  });

  it('acknowledges AWS managed policies only on the API Gateway logging role and the CodeDeploy role', () => {
    const iam4 = acknowledgements(synthesized().app).filter((ack) => ack.id.startsWith('AwsSolutions-IAM4'));
    expect(iam4.map((ack) => ack.path).sort()).toEqual([
      'PetStoreInventory-account-eu-west-1/ApiGatewayCloudWatchRole',
      'PetStoreInventory-production/Rollout/DeployRole',
      'PetStoreInventory-staging/Rollout/DeployRole',
    ]);
  });

  it('acknowledges the X-Ray wildcard on function roles only, and the version wildcards on the roles of the roll-out, never stack-wide', () => {
    const iam = acknowledgements(synthesized().app).filter((ack) => ack.id.startsWith('AwsSolutions-IAM5'));
    expect(iam.length).toBeGreaterThan(0);
    for (const ack of iam.filter((a) => a.id === 'AwsSolutions-IAM5[Resource::*]'))
      expect(ack.path).toMatch(
        /^PetStoreInventory-(staging|production)\/(SelfCheck\/|History\/|Webhooks\/(Subscriber\w+\/)?)?\w*FunctionRole$/,
      );
    for (const ack of iam.filter((a) => a.id !== 'AwsSolutions-IAM5[Resource::*]'))
      expect(ack.path).toMatch(
        /^PetStoreInventory-(staging|production)\/(PreTrafficHookFunctionRole|Rollout\/DeployRole)$/,
      );
  });

  it("names dynamodb:ListStreams besides X-Ray in the wildcard acknowledgement of the stream readers' roles only", () => {
    const iam = acknowledgements(synthesized().app).filter((ack) => ack.id.startsWith('AwsSolutions-IAM5'));
    const naming = iam.filter((ack) => ack.reason.includes('dynamodb:ListStreams')).map((ack) => ack.path);
    expect(naming.sort()).toEqual([
      'PetStoreInventory-production/History/FunctionRole',
      'PetStoreInventory-production/Webhooks/PublisherFunctionRole',
      'PetStoreInventory-staging/History/FunctionRole',
      'PetStoreInventory-staging/Webhooks/PublisherFunctionRole',
    ]);
  });

  it("acknowledges the missing dead-letter queue (SQS3) only on the stream mappings' on-failure queues, themselves dead-letter destinations", () => {
    const sqs3 = acknowledgements(synthesized().app).filter((ack) => ack.id === 'AwsSolutions-SQS3');
    expect(sqs3.map((ack) => ack.path).sort()).toEqual([
      'PetStoreInventory-production/History/FailedRecords',
      'PetStoreInventory-production/Webhooks/FailedRecords',
      'PetStoreInventory-staging/History/FailedRecords',
      'PetStoreInventory-staging/Webhooks/FailedRecords',
    ]);
  });

  it('fails synth on a finding nobody acknowledged', () => {
    // Prepare: the same app with one non-compliant resource (a topic without encryption or TLS enforcement).
    const withFinding = buildApp();
    new Topic(new Stack(withFinding.app, 'NagProbe'), 'UnencryptedTopic');
    try {
      // Act and assess
      expect(() => withFinding.app.synth()).toThrow(/AwsSolutions-SNS3/);
    } finally {
      rmSync(withFinding.outdir, { recursive: true, force: true });
    }
  });
});

describe("aws-cdk-lib's built-in CloudFormation validation (run by cdk synth and cdk deploy)", () => {
  it('finds nothing in any stack of the app', () => {
    // Prepare: every template of the cloud assembly and the app, as the synth hands them to the plugin.
    const stackTemplates = new CloudAssembly(synthesized().assembly).stacks.map((stack) => ({
      stackConstructPath: stack.hierarchicalId,
      templatePath: stack.templateFullPath,
      accountId: stack.environment.account,
      region: stack.environment.region,
    }));
    // Act
    const report = new CloudFormationValidatePlugin().validate({
      templatePaths: stackTemplates.map((stack) => stack.templatePath),
      stackTemplates,
      appConstruct: synthesized().app,
    });
    // Assess
    expect(report.violations.map((violation) => `${violation.ruleName}: ${violation.description}`)).toEqual([]);
    expect(report.success).toBe(true);
  });
});
