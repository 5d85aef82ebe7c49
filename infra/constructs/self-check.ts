import { createHash } from 'node:crypto';
import { CfnResource, Duration, Lazy, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Trigger } from 'aws-cdk-lib/triggers';
import { Construct } from 'constructs';
import { ENV } from '../../functions/config';
import type { InventoryApi } from './inventory-api';
import { InventoryFunction, type InventoryFunctionProps } from './inventory-function';

/** What the self-check and the pre-traffic hook may do on their own stack: read its status (a rollback or a deploy). */
export const STACK_STATUS_ACTIONS: readonly string[] = ['cloudformation:DescribeStacks'];

/** The trigger's property that changes whenever anything else in the stage changes. */
export const STAGE_FINGERPRINT_PROPERTY = 'StageFingerprint';

export interface SelfCheckProps extends Pick<InventoryFunctionProps, 'logRetention' | 'logRemovalPolicy'> {
  /** The API to call, through its stage's public execute-api URL (no IAM: a client's HTTPS call). */
  api: InventoryApi;
  /** The functions behind the API: the check runs once they and their roles are updated. */
  functions: Iterable<IFunction>;
  /** What else the stage must have in place first (the web ACL association, where there is one). */
  after: readonly Construct[];
  /** Where the short-lived keys are written. */
  apiKeysTable: ITable;
}

/** The construct ID under which aws-cdk-lib/triggers adds its provider to the stack. */
const TRIGGER_PROVIDER_ID = 'AWSCDK.TriggerCustomResourceProviderCustomResourceProvider';

/**
 * The deploy self-check, run by a CDK trigger (docs/deploying.md, "Self-check after deploy"): its `StageFingerprint`
 * hashes every other resource, so any deploy that changes something runs the check.
 */
export class SelfCheck extends Construct {
  readonly function: InventoryFunction;

  constructor(scope: Construct, id: string, props: SelfCheckProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.function = new InventoryFunction(this, 'Function', {
      handler: 'self-check',
      description: 'Deploy self-check: calls the stage as a client with short-lived keys, after each deployment',
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      // Requests of up to 10 s each (the list's 30 s), the cold starts of a first deploy, and a minute of retries
      // while a new deployment settles: a worst-case run and a retry fit.
      timeout: Duration.minutes(6),
      environment: {
        [ENV.apiKeysTable]: props.apiKeysTable.tableName,
        // The stage's own URL, not a custom domain whose DNS may still be settling.
        [ENV.selfCheckBaseUrl]: props.api.stageUrl,
        // A rollback runs the previous self-check again; its stack's status tells it so, and then a failed check
        // only warns (a failure could only leave the stack UPDATE_ROLLBACK_FAILED).
        [ENV.stackId]: stack.stackId,
      },
    });
    // It writes its short-lived keys and deletes them: nothing else, not even a read.
    props.apiKeysTable.grant(this.function, 'dynamodb:PutItem', 'dynamodb:DeleteItem');
    this.function.addToRolePolicy(
      new PolicyStatement({ actions: [...STACK_STATUS_ACTIONS], resources: [stack.stackId] }),
    );

    const functions = [...props.functions];
    const trigger = new Trigger(this, 'Trigger', {
      handler: this.function,
      timeout: Duration.minutes(7),
      executeAfter: [props.api, ...functions, ...functions.flatMap((fn) => (fn.role ? [fn.role] : [])), ...props.after],
    });
    // The trigger's provider, a function CDK adds once per stack, would log to a group Lambda creates and keeps
    // forever; it logs into one the stack owns instead (its role, AWSLambdaBasicExecutionRole, may write to any).
    const provider = stack.node.tryFindChild(TRIGGER_PROVIDER_ID)?.node.tryFindChild('Handler');
    if (!CfnResource.isCfnResource(provider))
      throw new Error(`no ${TRIGGER_PROVIDER_ID}/Handler: CDK's Trigger changed`);
    const providerLogs = new LogGroup(this, 'TriggerProviderLogGroup', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    provider.addPropertyOverride('LoggingConfig', { LogGroup: providerLogs.logGroupName });
    const triggerResource = trigger.node.findChild('Default').node.defaultChild as CfnResource;
    triggerResource.addPropertyOverride(
      STAGE_FINGERPRINT_PROPERTY,
      Lazy.string({ produce: () => stackFingerprint(stack, triggerResource) }),
    );
  }
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
