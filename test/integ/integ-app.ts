import { createHash, randomBytes } from 'node:crypto';
import { ExpectedResult, IntegTest, Match } from '@aws-cdk/integ-tests-alpha';
import { App, type AppProps, Aws, Duration, Stack } from 'aws-cdk-lib';
import { FilterOrPolicy, SubscriptionFilter } from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { SMOKE_CHECK_NAMES } from '../../functions/self-check/checks';
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
 *    `keys revoke --stage` does) and refused within a minute (the flush is accepted before it is done).
 *
 * The account's API Gateway CloudWatch role must already be set (staging's or production's account stack,
 * `PetStoreInventory-account-<region>`): the app does not include that shared stack, because integ-runner deploys
 * every stack of its app and destroys them all at the end, and the stages depend on it.
 */
export function createIntegApp(props: AppProps = {}, env: NodeJS.ProcessEnv = process.env) {
  const app = new App(props);
  const account = env.CDK_DEFAULT_ACCOUNT ?? '000000000000';
  const region = env.CDK_DEFAULT_REGION ?? DEFAULT_REGION;
  const base = stageConfig('staging');
  const config = { ...base, env: { account, region } };
  const stack = new InventoryStack(app, INTEG_STACK_NAME, { config });
  const alarm = stack.monitoring.authorizerUnavailableAlarm;

  // The test's own subscription to the alarm topic: what an on-call would receive, of the one alarm the test sets.
  // The other alarms notify too (their OK actions fire on INSUFFICIENT_DATA -> OK after the deploy), so the
  // subscription lets only this alarm's ALARM through (a filter policy on the message body).
  const inbox = new Queue(stack, 'IntegAlarmInbox', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.hours(1),
  });
  stack.monitoring.topic.addSubscription(
    new SqsSubscription(inbox, {
      rawMessageDelivery: true,
      filterPolicyWithMessageBody: {
        AlarmName: FilterOrPolicy.filter(SubscriptionFilter.stringFilter({ allowlist: [alarm.alarmName] })),
        NewStateValue: FilterOrPolicy.filter(SubscriptionFilter.stringFilter({ allowlist: ['ALARM'] })),
      },
    }),
  );

  const assertionStack = new Stack(app, 'PetStoreInventory-integ-assertions', { env: { account, region } });
  const integ = new IntegTest(app, 'Inventory', {
    testCases: [stack],
    // In the stage's account and region, so the assertions can name its resources.
    assertionStack,
    diffAssets: false,
    stackUpdateWorkflow: false,
    // A changed function publishes new versions (and their per-version gate alarms) in place of the old ones: against
    // a kept snapshot integ-runner would call that destructive and fail a passing run.
    allowDestroy: ['AWS::Lambda::Version', 'AWS::CloudWatch::Alarm'],
    cdkCommandOptions: { destroy: { args: { force: true } } },
  });

  // 1. The end-to-end contract checks (the CLI's smoke checks) against the deployed stage. The function answers its
  // report (`SelfCheckReport`), which integ-tests hands over as a JSON string; a failed check throws, and then the
  // payload is an error without `passed`.
  integ.assertions.invokeFunction({ functionName: stack.selfCheck.function.functionName }).expect(
    ExpectedResult.objectLike({
      StatusCode: 200,
      Payload: Match.serializedJson(
        Match.objectLike({ passed: Match.arrayWith([SMOKE_CHECK_NAMES.unauthorized, SMOKE_CHECK_NAMES.list]) }),
      ),
    }),
  );

  // 2. An alarm reaches its subscribers.
  integ.assertions
    .awsApiCall('CloudWatch', 'setAlarmState', {
      AlarmName: alarm.alarmName,
      StateValue: 'ALARM',
      StateReason: 'npm run integ: checks that an alarm reaches its subscribers',
    })
    .next(
      integ.assertions
        .awsApiCall('SQS', 'receiveMessage', { QueueUrl: inbox.queueUrl, WaitTimeSeconds: 20 })
        // With assertAtPath the provider parses a JSON string in the answer and keeps its leaves: the alarm's
        // notification (the raw message body) is read member by member.
        .assertAtPath('Messages.0.Body.NewStateValue', ExpectedResult.exact('ALARM'))
        .waitForAssertions({ totalTimeout: Duration.minutes(5), interval: Duration.seconds(10) }),
    );

  // 3. A revoked key is refused once the cache is flushed. The key exists only in this throwaway stage. The flush is API Gateway's
  // `DELETE /restapis/{id}/stages/{stage}/cache/authorizers`, authorized as apigateway:DELETE on that path (Service
  // Authorization Reference, Amazon API Gateway Management): integ-tests derives an action that does not exist from
  // the SDK call's name, so the provider is given the real one (as the operator policy has it).
  const restApiId = stack.api.api.restApiId;
  const stageName = stack.api.api.deploymentStage.stageName;
  const flush = integ.assertions.awsApiCall('APIGateway', 'flushStageAuthorizersCache', { restApiId, stageName });
  flush.provider.addToRolePolicy({
    Effect: 'Allow',
    Action: ['apigateway:DELETE'],
    Resource: [
      `arn:${Aws.PARTITION}:apigateway:${region}::/restapis/${restApiId}/stages/${stageName}/cache/authorizers`,
    ],
  });
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
    .next(flush)
    // The flush is accepted (202) before it is done everywhere: the 401 is awaited, not assumed on the first call.
    .next(
      integ.assertions
        .httpApiCall(url, { headers })
        .expect(ExpectedResult.objectLike({ status: 401 }))
        .waitForAssertions({ totalTimeout: Duration.minutes(1), interval: Duration.seconds(5) }),
    );

  return { app, stack, integ, assertionStack };
}
