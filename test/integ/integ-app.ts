import { createHash, randomBytes } from 'node:crypto';
import { ExpectedResult, IntegTest } from '@aws-cdk/integ-tests-alpha';
import { App, type AppProps, Duration, Stack } from 'aws-cdk-lib';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { ApiGatewayAccountStack } from '../../infra/account-stack';
import { InventoryStack } from '../../infra/inventory-stack';
import { DEFAULT_REGION, stageConfig } from '../../infra/stage-config';

/** The throwaway stage's stack name: its own tables, functions and API, destroyed after the run. */
export const INTEG_STACK_NAME = 'PetStoreInventory-integ';

/**
 * The integ app of `npm run integ` (AWS's integ-runner): a throwaway stage with staging's settings in the account
 * and region of the credentials, and assertions that run against it once deployed:
 * 1. the deploy self-check, invoked again: the end-to-end contract checks against the stage's URL;
 * 2. an alarm set to ALARM reaches an SQS queue subscribed to the alarm topic (CloudWatch may publish, KMS included);
 * 3. a key written to the keys table is accepted, then revoked (revokedAt and the authorizer cache flushed, as
 *    `keys revoke --stage` does) and refused on the very next request.
 */
export function createIntegApp(props: AppProps = {}, env: NodeJS.ProcessEnv = process.env) {
  const app = new App(props);
  const account = env.CDK_DEFAULT_ACCOUNT ?? '000000000000';
  const region = env.CDK_DEFAULT_REGION ?? DEFAULT_REGION;
  const base = stageConfig('staging');
  const config = { ...base, env: { account, region } };
  const accountStack = new ApiGatewayAccountStack(app, 'PetStoreInventory-integ-account', { env: { account, region } });
  const stack = new InventoryStack(app, INTEG_STACK_NAME, { config });
  stack.addStackDependency(accountStack);

  // The test's own subscription to the alarm topic: what an on-call would receive.
  const inbox = new Queue(stack, 'IntegAlarmInbox', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.hours(1),
  });
  stack.monitoring.topic.addSubscription(new SqsSubscription(inbox, { rawMessageDelivery: true }));

  const assertionStack = new Stack(app, 'PetStoreInventory-integ-assertions', { env: { account, region } });
  const integ = new IntegTest(app, 'Inventory', {
    testCases: [stack],
    // In the stage's account and region, so the assertions can name its resources.
    assertionStack,
    diffAssets: false,
    stackUpdateWorkflow: false,
    cdkCommandOptions: { destroy: { args: { force: true } } },
  });

  // 1. The end-to-end contract checks (the CLI's smoke checks) against the deployed stage.
  integ.assertions
    .invokeFunction({ functionName: stack.selfCheck.function.functionName })
    .expect(ExpectedResult.objectLike({ StatusCode: 200, Payload: 'null' }));

  // 2. An alarm reaches its subscribers.
  const alarm = stack.monitoring.authorizerUnavailableAlarm;
  integ.assertions
    .awsApiCall('CloudWatch', 'setAlarmState', {
      AlarmName: alarm.alarmName,
      StateValue: 'ALARM',
      StateReason: 'npm run integ: checks that an alarm reaches its subscribers',
    })
    .next(
      integ.assertions
        .awsApiCall('SQS', 'receiveMessage', { QueueUrl: inbox.queueUrl, WaitTimeSeconds: 20 })
        .assertAtPath('Messages.0.Body', ExpectedResult.stringLikeRegexp('"NewStateValue":"ALARM"'))
        .waitForAssertions({ totalTimeout: Duration.minutes(5), interval: Duration.seconds(10) }),
    );

  // 3. A revoked key is refused at once. The key exists only in this throwaway stage.
  const key = `psk_${randomBytes(32).toString('base64url')}`;
  const keyHash = createHash('sha256').update(key, 'utf8').digest('hex');
  const url = `${stack.api.stageUrl}/inventory`;
  const headers = { Authorization: `Bearer ${key}` };
  integ.assertions
    .awsApiCall('DynamoDB', 'putItem', {
      TableName: stack.apiKeysTable.tableName,
      Item: {
        keyHash: { S: keyHash },
        keyId: { S: 'key_integ0000000000' },
        name: { S: 'npm run integ' },
        createdAt: { S: '2026-01-01T00:00:00.000Z' },
      },
    })
    .next(integ.assertions.httpApiCall(url, { headers }).expect(ExpectedResult.objectLike({ status: 200 })))
    .next(
      integ.assertions.awsApiCall('DynamoDB', 'updateItem', {
        TableName: stack.apiKeysTable.tableName,
        Key: { keyHash: { S: keyHash } },
        UpdateExpression: 'SET revokedAt = :at',
        ExpressionAttributeValues: { ':at': { S: '2026-01-01T00:00:01.000Z' } },
      }),
    )
    .next(
      integ.assertions.awsApiCall('APIGateway', 'flushStageAuthorizersCache', {
        restApiId: stack.api.api.restApiId,
        stageName: stack.api.api.deploymentStage.stageName,
      }),
    )
    .next(integ.assertions.httpApiCall(url, { headers }).expect(ExpectedResult.objectLike({ status: 401 })));

  return { app, stack, integ, assertionStack };
}
