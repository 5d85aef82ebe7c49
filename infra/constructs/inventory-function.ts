import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { SERVICE_NAME } from '../../service/metric-names';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../../service/routes';
import { BUNDLING, handlerEntry, PROJECT_ROOT } from '../bundling';

/**
 * Memory of a function that sets none (listInventory sets its own): Lambda gives CPU in proportion to memory, and
 * init and p99 are CPU-bound, so the default leaves headroom over the measured peak (docs/performance.md, "Memory sizes").
 */
export const DEFAULT_MEMORY_MB = 256;
/**
 * Memory of listInventory. The list streams (at most two Query pages per shard are held), so memory does not bound the
 * inventory; this size buys CPU, which Lambda gives in proportion to memory, for the list's CPU-bound merge,
 * serialization and gzip, with headroom over its measured peak at 1,000,000 entries (docs/performance.md,
 * "Memory sizes").
 */
export const LIST_INVENTORY_MEMORY_MB = 1024;
/**
 * Timeout of a function whose route sets none (listInventory has its own): the SDK's bounded retries give up well
 * within it (functions/store/dynamo-client.ts).
 */
export const DEFAULT_TIMEOUT = Duration.seconds(DEFAULT_FUNCTION_TIMEOUT_SECONDS);

/** Properties of an {@link InventoryFunction}. */
export interface InventoryFunctionProps {
  /** The module under `functions/handlers/` that exports `handler`. */
  handler: string;
  /** Human-readable purpose, shown in the console. */
  description: string;
  /** Environment variables besides the shared ones. @default none */
  environment?: Record<string, string>;
  /** Retention of the function's log group. */
  logRetention: RetentionDays;
  /** What happens to the log group when the stack is deleted. */
  logRemovalPolicy: RemovalPolicy;
  /** Powertools log level. @default 'INFO' */
  logLevel?: string;
  /** @default {@link DEFAULT_MEMORY_MB} */
  memorySize?: number;
  /** @default {@link DEFAULT_TIMEOUT} */
  timeout?: Duration;
  /** Concurrency reserved for (and the most allowed to) the function. @default none: the account's shared pool */
  reservedConcurrentExecutions?: number;
  /**
   * Actions besides X-Ray the role needs on `*` because they have no resource-level permissions, and why: named in
   * the role's cdk-nag acknowledgement. @default none
   */
  wildcardActions?: { actions: readonly string[]; why: string };
}

/** The alias API Gateway invokes: each deploy publishes a version and moves this alias to it. */
export const LIVE_ALIAS_NAME = 'live';

/**
 * A handler from `functions/handlers/`, with this service's defaults fixed once: Node 24 on arm64, bundled by
 * {@link BUNDLING}, X-Ray active tracing, its own log group with retention, and its own role that may write only
 * to that log group (and X-Ray). Table access is granted per function by the stack, nothing else.
 *
 * The log group and role are created beside the function (`<id>LogGroup`, `<id>Role`) so the function can be
 * built with them. Every deploy that changes the code or configuration publishes a new version; {@link live} is the
 * alias callers use, moved to the new version by CodeDeploy (see InventoryRollout).
 */
export class InventoryFunction extends NodejsFunction {
  /** The module under `functions/handlers/` this function runs. */
  readonly handlerModule: string;
  /** The `live` alias: what API Gateway invokes, never `$LATEST`. */
  readonly live: Alias;

  constructor(scope: Construct, id: string, props: InventoryFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    // Our own role instead of AWSLambdaBasicExecutionRole, whose logs permissions cover every log group.
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${props.handler} function`,
    });
    role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );

    super(scope, id, {
      entry: handlerEntry(props.handler),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}/package-lock.json`,
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      timeout: props.timeout ?? DEFAULT_TIMEOUT,
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      bundling: BUNDLING,
      environment: {
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_LOG_LEVEL: props.logLevel ?? 'INFO',
        // Powertools' default in Lambda, written out: the DynamoDB subsegments under active tracing need it.
        POWERTOOLS_TRACE_ENABLED: 'true',
        ...props.environment,
      },
    });
    this.handlerModule = props.handler;
    const xray = 'X-Ray (xray:PutTraceSegments, xray:PutTelemetryRecords, added by active tracing)';
    const extra = props.wildcardActions;
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: extra
        ? `The only wildcards are ${xray} and ${extra.actions.join(', ')} (${extra.why}): these actions have no ` +
          'resource-level permissions. Every other grant names its resources.'
        : `The only wildcard is ${xray}: these actions have no resource-level permissions. Logs and DynamoDB ` +
          'grants name their resources.',
    });
    this.live = new Alias(this, 'LiveAlias', { aliasName: LIVE_ALIAS_NAME, version: this.currentVersion });
  }
}
