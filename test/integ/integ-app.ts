import { ExpectedResult, type IApiCall, IntegTest, Match } from '@aws-cdk/integ-tests-alpha';
import { marshall } from '@aws-sdk/util-dynamodb';
import { App, type AppProps, Aws, Duration, Stack } from 'aws-cdk-lib';
import { LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { FilterOrPolicy, SubscriptionFilter } from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { type ApiKeyScope, generateApiKey } from '../../functions/api-keys/key';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from '../../functions/http/idempotency';
import { CHECKS } from '../../functions/self-check/checks';
import { inventoryAttributes, PET_ID } from '../../functions/store/inventory-row';
import { InventoryStack } from '../../infra/inventory-stack';
import { DEFAULT_REGION, PLACEHOLDER_ACCOUNT, stageConfig } from '../../infra/stage-config';
import {
  INTEG_ASSERTION_STACK_NAME,
  INTEG_REVISION_CONTEXT,
  INTEG_ROLLOUT_STACK_NAME,
  INTEG_STACK_NAME,
  INTEG_STAGE,
} from './names';

/** The one entry of the stage's inventory: seeded, listed, then adjusted by {@link ADJUST_BY}. */
const PET = { petId: '4242', quantity: 5, status: 'available' } as const;
const ADJUST_BY = 3;
/** The entry as the API answers it (petId a JSON number) after one adjustment. */
const ADJUSTED = { petId: Number(PET.petId), quantity: PET.quantity + ADJUST_BY, status: PET.status };

/**
 * The integ app of `npm run integ` (test/integ/run.ts): a throwaway stage named {@link INTEG_STAGE} with staging's
 * settings (a CodeDeploy roll-out at once) in the account and region of the credentials, and assertions that run against it once deployed:
 * 1. the deploy self-check, invoked again: the end-to-end contract checks against the stage's URL;
 * 2. an alarm set to ALARM reaches an SQS queue subscribed to the alarm topic (CloudWatch may publish, KMS included);
 * 3. with a write key: the list streamed gzipped; an `adjustBy` replayed by its Idempotency-Key, the stock moved once;
 *    a read key's PATCH refused; the write key revoked (revokedAt and the authorizer cache flushed, as
 *    `keys revoke --stage` does) and refused within a minute (the flush is accepted before it is done);
 * 4. (second deploy, {@link INTEG_REVISION_CONTEXT} set) the update's CodeDeploy deployment succeeded, its
 *    BeforeAllowTraffic event too: the pre-traffic hook's verdict was accepted.
 *
 * The account's API Gateway CloudWatch role must already be set (staging's or production's account stack,
 * `PetStoreInventory-account-<region>`): the app does not include that shared stack, because the run destroys
 * every stack of this app at the end, and the stages depend on it.
 */
export function createIntegApp(props: AppProps = {}, env: NodeJS.ProcessEnv = process.env) {
  const app = new App(props);
  const account = env.CDK_DEFAULT_ACCOUNT ?? PLACEHOLDER_ACCOUNT;
  const region = env.CDK_DEFAULT_REGION ?? DEFAULT_REGION;
  const config = { ...stageConfig('staging'), stage: INTEG_STAGE, env: { account, region } };
  const stack = new InventoryStack(app, INTEG_STACK_NAME, { config });
  const revision = app.node.tryGetContext(INTEG_REVISION_CONTEXT);
  if (revision !== undefined)
    for (const fn of stack.functions.values()) fn.addEnvironment('INTEG_REVISION', String(revision));

  const assertionStack = new Stack(app, INTEG_ASSERTION_STACK_NAME, { env: { account, region } });
  // In the stage's account and region, so the assertions can name its resources.
  const integ = new IntegTest(app, 'Inventory', { testCases: [stack], assertionStack });
  checkAlarmDelivery(integ, stack);
  inSequence([
    // First, so that nothing else changes the entries while it reads them.
    checkSelf(integ, stack),
    ...checkClientCalls(integ, stack),
  ]);

  const rolloutStack = new Stack(app, INTEG_ROLLOUT_STACK_NAME, { env: { account, region } });
  checkRollout(new IntegTest(app, 'Rollout', { testCases: [stack], assertionStack: rolloutStack }), stack);
  return { app, stack, integ, assertionStack, rolloutStack };
}

/**
 * Outside integ-runner a failed expectation is only recorded (in an output) while its custom resource succeeds;
 * awaited, it is retried every 10 s, and one still failing after `totalTimeout` fails the resource, and the deploy.
 */
function awaited(call: IApiCall, totalTimeout = Duration.minutes(1)): IApiCall {
  return call.waitForAssertions({ totalTimeout, interval: Duration.seconds(10) });
}

/** Runs the calls one after the other. */
function inSequence(calls: readonly IApiCall[]): void {
  calls.reduce((previous, call) => previous.next(call));
}

/**
 * The deploy checks (the self-check's, the CLI's smoke) against the deployed stage, every one passed. The function answers its
 * report (`SelfCheckReport`), which integ-tests hands over as a JSON string; a failed check throws, and then the
 * payload is an error without `passed`.
 */
function checkSelf(integ: IntegTest, stack: InventoryStack): IApiCall {
  const invoke = integ.assertions.invokeFunction({ functionName: stack.selfCheck.function.functionName });
  const passed = Match.arrayWith(CHECKS.map(({ name }) => name));
  invoke.expect(
    ExpectedResult.objectLike({ StatusCode: 200, Payload: Match.serializedJson(Match.objectLike({ passed })) }),
  );
  return awaited(invoke, Duration.minutes(2));
}

/**
 * An alarm reaches its subscribers: the test's own SQS subscription to the alarm topic receives the notification of
 * the one alarm the test sets. The other alarms notify too (their OK actions fire on INSUFFICIENT_DATA -> OK after
 * the deploy), so the subscription lets only this alarm's ALARM through (a filter policy on the message body).
 */
function checkAlarmDelivery(integ: IntegTest, stack: InventoryStack): void {
  const alarm = stack.monitoring.authorizerUnavailableAlarm;
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
  const setAlarm = integ.assertions.awsApiCall('CloudWatch', 'setAlarmState', {
    AlarmName: alarm.alarmName,
    StateValue: 'ALARM',
    StateReason: 'npm run integ: checks that an alarm reaches its subscribers',
  });
  const receive = integ.assertions
    .awsApiCall('SQS', 'receiveMessage', { QueueUrl: inbox.queueUrl, WaitTimeSeconds: 20 })
    // With assertAtPath the provider parses a JSON string in the answer and keeps its leaves: the alarm's
    // notification (the raw message body) is read member by member.
    .assertAtPath('Messages.0.Body.NewStateValue', ExpectedResult.exact('ALARM'));
  setAlarm.next(awaited(receive, Duration.minutes(5)));
}

/** A key of `scope` put in the stage's keys table, and the Authorization header that sends it. */
function putKey(integ: IntegTest, stack: InventoryStack, scope: ApiKeyScope) {
  const { key, record } = generateApiKey(`npm run integ (${scope})`, new Date(), scope);
  const put = integ.assertions.awsApiCall('DynamoDB', 'putItem', {
    TableName: stack.apiKeysTable.tableName,
    Item: marshall(record),
  });
  return { put, record, authorization: `Bearer ${key}` };
}

/**
 * What clients meet, in order: the list streamed gzipped (the STREAM integration), an `adjustBy` replayed by its
 * Idempotency-Key, a read key's PATCH refused, the stock moved once, and the write key revoked then refused.
 */
function checkClientCalls(integ: IntegTest, stack: InventoryStack): IApiCall[] {
  const writer = putKey(integ, stack, 'write');
  const reader = putKey(integ, stack, 'read');
  const seed = integ.assertions.awsApiCall('DynamoDB', 'putItem', {
    TableName: stack.inventoryTable.tableName,
    Item: inventoryAttributes(PET),
  });
  const list = integ.assertions
    .httpApiCall(`${stack.api.stageUrl}/inventory`, {
      headers: { Authorization: writer.authorization, 'Accept-Encoding': 'gzip' },
    })
    .expect(
      ExpectedResult.objectLike({
        status: 200,
        // A STREAM integration's answer leaves API Gateway before it is complete, so without a Content-Length:
        // chunked over HTTP/1.1 (RFC 9112, 6.1). A buffered one is sent whole, with its length.
        headers: Match.objectLike({ 'content-encoding': ['gzip'], 'transfer-encoding': ['chunked'] }),
        body: [{ petId: Number(PET.petId), quantity: PET.quantity, status: PET.status }],
      }),
    );
  return [
    writer.put,
    reader.put,
    seed,
    awaited(list),
    ...checkIdempotentReplay(integ, stack, writer.authorization, reader.authorization),
    ...checkRevocation(integ, stack, writer.record.keyHash, writer.authorization),
  ];
}

/**
 * Two PATCHes `{"adjustBy": 3}` with one Idempotency-Key: the second answers the first's body with
 * `Idempotent-Replayed: true`; then a read key's PATCH answers 403; the stored stock moved once.
 */
function checkIdempotentReplay(integ: IntegTest, stack: InventoryStack, writer: string, reader: string): IApiCall[] {
  const url = `${stack.api.stageUrl}/inventory/${PET.petId}`;
  const body = JSON.stringify({ adjustBy: ADJUST_BY });
  const json = { 'Content-Type': 'application/json' };
  const patch = {
    method: 'PATCH',
    body,
    headers: { ...json, Authorization: writer, [IDEMPOTENCY_KEY_HEADER]: `npm-run-integ-${Date.now()}` },
  };
  const first = integ.assertions
    .httpApiCall(url, patch)
    .expect(ExpectedResult.objectLike({ status: 200, body: ADJUSTED }));
  const replayed = integ.assertions.httpApiCall(url, patch).expect(
    ExpectedResult.objectLike({
      status: 200,
      headers: Match.objectLike({ [IDEMPOTENT_REPLAYED_HEADER.toLowerCase()]: ['true'] }),
      body: ADJUSTED,
    }),
  );
  const refused = integ.assertions
    .httpApiCall(url, { method: 'PATCH', body, headers: { ...json, Authorization: reader } })
    .expect(ExpectedResult.objectLike({ status: 403, body: Match.objectLike({ code: 'ACCESS_DENIED', status: 403 }) }));
  const stock = integ.assertions
    .awsApiCall('DynamoDB', 'getItem', {
      TableName: stack.inventoryTable.tableName,
      Key: { [PET_ID]: { N: PET.petId } },
      ConsistentRead: true,
    })
    .expect(ExpectedResult.objectLike({ Item: Match.objectLike({ quantity: { N: String(ADJUSTED.quantity) } }) }));
  return [awaited(first), awaited(replayed), awaited(refused), awaited(stock)];
}

/**
 * A revoked key is refused once the cache is flushed. The flush is API Gateway's
 * `DELETE /restapis/{id}/stages/{stage}/cache/authorizers`, authorized as apigateway:DELETE on that path (Service
 * Authorization Reference, Amazon API Gateway Management): integ-tests derives an action that does not exist from
 * the SDK call's name, so the provider is given the real one (as the operator policy has it).
 */
function checkRevocation(integ: IntegTest, stack: InventoryStack, keyHash: string, authorization: string): IApiCall[] {
  const restApiId = stack.api.api.restApiId;
  const stageName = stack.api.api.deploymentStage.stageName;
  const flush = integ.assertions.awsApiCall('APIGateway', 'flushStageAuthorizersCache', { restApiId, stageName });
  flush.provider.addToRolePolicy({
    Effect: 'Allow',
    Action: ['apigateway:DELETE'],
    Resource: [
      `arn:${Aws.PARTITION}:apigateway:${stack.region}::/restapis/${restApiId}/stages/${stageName}/cache/authorizers`,
    ],
  });
  const revoke = integ.assertions.awsApiCall('DynamoDB', 'updateItem', {
    TableName: stack.apiKeysTable.tableName,
    Key: { keyHash: { S: keyHash } },
    UpdateExpression: 'SET revokedAt = :at',
    ExpressionAttributeValues: { ':at': { S: new Date().toISOString() } },
  });
  // The flush is accepted (202) before it is done everywhere: the 401 is awaited, not assumed on the first call.
  const refused = integ.assertions
    .httpApiCall(`${stack.api.stageUrl}/inventory`, { headers: { Authorization: authorization } })
    .expect(ExpectedResult.objectLike({ status: 401 }));
  return [revoke, flush, awaited(refused)];
}

/**
 * The second deploy's proof that the pre-traffic hook's verdict is accepted: the update published new versions, so
 * CodeDeploy shifted each `live` alias; one deployment group's deployment (the first deploy made none) succeeded, its
 * BeforeAllowTraffic event too. A deployment that fails fails the stage's update itself, before this runs.
 */
function checkRollout(integ: IntegTest, stack: InventoryStack): void {
  const group = stack.rollout.node.children.find((child) => child instanceof LambdaDeploymentGroup);
  if (!(group instanceof LambdaDeploymentGroup)) throw new Error('The stage has no CodeDeploy deployment group');
  const deployments = integ.assertions.awsApiCall('CodeDeploy', 'listDeployments', {
    applicationName: stack.rollout.application.applicationName,
    deploymentGroupName: group.deploymentGroupName,
  });
  const deploymentId = deployments.getAttString('deployments.0');
  const deployment = integ.assertions
    .awsApiCall('CodeDeploy', 'getDeployment', { deploymentId })
    .expect(ExpectedResult.objectLike({ deploymentInfo: { status: 'Succeeded' } }));
  const targets = integ.assertions.awsApiCall('CodeDeploy', 'listDeploymentTargets', { deploymentId });
  const target = integ.assertions
    .awsApiCall('CodeDeploy', 'getDeploymentTarget', { deploymentId, targetId: targets.getAttString('targetIds.0') })
    .expect(
      ExpectedResult.objectLike({
        deploymentTarget: {
          lambdaTarget: {
            lifecycleEvents: Match.arrayWith([
              Match.objectLike({ lifecycleEventName: 'BeforeAllowTraffic', status: 'Succeeded' }),
            ]),
          },
        },
      }),
    );
  inSequence([deployments, awaited(deployment), targets, awaited(target)]);
}
