import { createHash } from 'node:crypto';
import { CfnResource, Duration, Lazy, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Trigger } from 'aws-cdk-lib/triggers';
import { Construct } from 'constructs';
import { ENV } from '../../functions/config';
import type { InventoryApi } from './inventory-api';
import { InventoryFunction } from './inventory-function';

/** The self-check's module under `functions/handlers/`. */
export const SELF_CHECK_HANDLER = 'self-check';

/** It writes its short-lived key and deletes it: nothing else, not even a read. */
export const SELF_CHECK_TABLE_ACTIONS: readonly string[] = ['dynamodb:PutItem', 'dynamodb:DeleteItem'];

/**
 * Time the self-check may take: its requests wait up to 10 s each (the list's page of one entry 30 s, `SMOKE_LIST_TIMEOUT_MS`),
 * room for the cold start of every function they reach on a first deploy, and failing checks are retried for up to a
 * minute while a new deployment settles: a worst-case run and a retry fit.
 */
export const SELF_CHECK_TIMEOUT = Duration.minutes(6);

/** How long the trigger waits for the self-check's answer: longer than the function may run. */
export const SELF_CHECK_TRIGGER_TIMEOUT = SELF_CHECK_TIMEOUT.plus(Duration.minutes(1));

/** What the self-check may do on the alarm topic: read who subscribes, nothing else (it never publishes). */
export const SELF_CHECK_TOPIC_ACTIONS: readonly string[] = ['sns:ListSubscriptionsByTopic'];

/** What the self-check and the pre-traffic hook may do on their own stack: read its status (a rollback or a deploy). */
export const STACK_STATUS_ACTIONS: readonly string[] = ['cloudformation:DescribeStacks'];

/** Name of the trigger's property that changes whenever anything else in the stage changes. */
export const STAGE_FINGERPRINT_PROPERTY = 'StageFingerprint';

/** Properties of a {@link SelfCheck}. */
export interface SelfCheckProps {
  /** The API to call, through its stage's public execute-api URL (no IAM: a client's HTTPS call). */
  api: InventoryApi;
  /** The functions behind the API (routes and authorizer): the check runs once they and their roles are updated. */
  functions: Iterable<IFunction>;
  /** What else the stage must have in place first (the web ACL association, where there is one). @default none */
  after?: readonly Construct[];
  /** Where the short-lived key is written. */
  apiKeysTable: ITable;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  /** Powertools log level. @default 'INFO' */
  logLevel?: string;
}

/** The construct ID under which aws-cdk-lib/triggers adds its provider to the stack. */
const TRIGGER_PROVIDER_ID = 'AWSCDK.TriggerCustomResourceProviderCustomResourceProvider';

/**
 * The deploy self-check: a function that calls the stage as a client would (the CLI's smoke checks, with a key
 * that exists only for the run) and a CDK trigger that invokes it after the API, the functions and their roles
 * are deployed. A failed check fails the trigger, so the deployment fails and CloudFormation rolls back.
 *
 * A trigger runs when CloudFormation creates or updates it. Its `StageFingerprint` property is a hash of every
 * other resource of the stack as synthesized, so a deploy that changes anything (code, configuration, IAM,
 * routes, gateway responses, the stage) updates the trigger and runs the check; a deploy that changes nothing is
 * no update at all. `executeOnHandlerChange` stays on: an update with it off would skip the run.
 */
export class SelfCheck extends Construct {
  readonly function: InventoryFunction;
  readonly trigger: Trigger;

  constructor(scope: Construct, id: string, props: SelfCheckProps) {
    super(scope, id);

    this.function = new InventoryFunction(this, 'Function', {
      handler: SELF_CHECK_HANDLER,
      description: 'Deploy self-check: calls the stage as a client with a short-lived key, after each deployment',
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      ...(props.logLevel ? { logLevel: props.logLevel } : {}),
      timeout: SELF_CHECK_TIMEOUT,
      environment: {
        [ENV.apiKeysTable]: props.apiKeysTable.tableName,
        // The stage's own URL, not a custom domain whose DNS may still be settling.
        [ENV.selfCheckBaseUrl]: props.api.stageUrl,
      },
    });
    props.apiKeysTable.grant(this.function, ...SELF_CHECK_TABLE_ACTIONS);
    // A rollback runs the previous self-check again; its stack's status tells it so, and then a failed check only
    // warns (a failure could only leave the stack UPDATE_ROLLBACK_FAILED).
    const stack = Stack.of(this);
    this.function.addEnvironment(ENV.stackId, stack.stackId);
    this.function.addToRolePolicy(
      new PolicyStatement({ actions: [...STACK_STATUS_ACTIONS], resources: [stack.stackId] }),
    );

    const functions = [...props.functions];
    this.trigger = new Trigger(this, 'Trigger', {
      handler: this.function,
      timeout: SELF_CHECK_TRIGGER_TIMEOUT,
      executeOnHandlerChange: true,
      executeAfter: [
        props.api,
        ...functions,
        ...functions.flatMap((fn) => (fn.role ? [fn.role] : [])),
        ...(props.after ?? []),
      ],
    });
    // The trigger's provider, a function CDK adds once per stack, has no log group of its own: Lambda would create
    // /aws/lambda/<name> on its first run, kept forever, and `cdk destroy` would leave it behind. It logs into one the
    // stack owns instead, with the stage's retention and removal policy (its role, AWSLambdaBasicExecutionRole, may
    // write to any group).
    const provider = Stack.of(this).node.tryFindChild(TRIGGER_PROVIDER_ID)?.node.tryFindChild('Handler');
    if (!CfnResource.isCfnResource(provider))
      throw new Error(`no ${TRIGGER_PROVIDER_ID}/Handler: CDK's Trigger changed`);
    const providerLogs = new LogGroup(this, 'TriggerProviderLogGroup', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    provider.addPropertyOverride('LoggingConfig', { LogGroup: providerLogs.logGroupName });
    const triggerResource = this.trigger.node.findChild('Default').node.defaultChild as CfnResource;
    triggerResource.addPropertyOverride(
      STAGE_FINGERPRINT_PROPERTY,
      Lazy.string({ produce: () => stackFingerprint(Stack.of(this), triggerResource) }),
    );
  }

  /**
   * Makes the self-check also ask SNS whether the stage's alarms reach anyone, after the topic and its subscriptions
   * are deployed (`functions/self-check/alarm-delivery.ts`): it may list the topic's subscriptions and nothing else.
   */
  checkAlarmDelivery(props: AlarmDeliveryCheckProps): void {
    this.function.addEnvironment(ENV.alarmTopicArn, props.topic.topicArn);
    this.function.addEnvironment(ENV.alarmOnCallTopic, String(props.onCallTopic));
    this.function.addEnvironment(ENV.alarmDeliveryRequired, String(props.required));
    this.function.addToRolePolicy(
      new PolicyStatement({ actions: [...SELF_CHECK_TOPIC_ACTIONS], resources: [props.topic.topicArn] }),
    );
    this.trigger.executeAfter(props.topic);
  }
}

/** Properties of {@link SelfCheck.checkAlarmDelivery}. */
export interface AlarmDeliveryCheckProps {
  /** The stage's alarm topic (its subscriptions included: the check runs after they are deployed). */
  topic: ITopic;
  /** The alarms also publish to a configured on-call topic. */
  onCallTopic: boolean;
  /** Alarms that reach no one fail the deployment (production); elsewhere they are a warning. */
  required: boolean;
}

/**
 * SHA-256 of the synthesized CloudFormation of every resource in the stack but `except`, in construct order:
 * it changes when a deploy changes any resource besides the trigger itself (outputs alone do not count).
 */
function stackFingerprint(stack: Stack, except: CfnResource): string {
  const hash = createHash('sha256');
  for (const construct of stack.node.findAll()) {
    if (!CfnResource.isCfnResource(construct) || construct === except) continue;
    // The rendering CDK writes into the template (its Lambda version hash reads resources the same way).
    hash.update(JSON.stringify(stack.resolve(construct._toCloudFormation())));
    hash.update('\n');
  }
  return hash.digest('hex');
}
