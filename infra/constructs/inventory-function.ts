import { join } from 'node:path';
import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { SERVICE_NAME } from '../../service/metric-names';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../../service/routes';
import { BUNDLING, PROJECT_ROOT } from '../bundling';

/**
 * Memory of listInventory: Lambda gives CPU in proportion to memory, and the list's merge, serialization and gzip
 * are CPU-bound (docs/performance.md, "Memory sizes").
 */
export const LIST_INVENTORY_MEMORY_MB = 1024;

/** Powertools log level of every function, on both stages. */
const LOG_LEVEL = 'INFO';

/** A construct ID from a name: `listInventory` -> `ListInventory`. */
export function pascalCase(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

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
  /** @default 256 MB, headroom over the measured peak (docs/performance.md, "Memory sizes") */
  memorySize?: number;
  /** @default DEFAULT_FUNCTION_TIMEOUT_SECONDS */
  timeout?: Duration;
  /** Concurrency reserved for (and the most allowed to) the function. @default none: the account's shared pool */
  reservedConcurrentExecutions?: number;
  /** An action besides X-Ray's that the role needs on `*`, and why (its cdk-nag acknowledgement). @default none */
  wildcardAction?: string;
}

/**
 * A handler from `functions/handlers/` on Node 24 arm64 with X-Ray, its own log group and a role that may write only
 * to it; the stack grants table access. Log group and role sit beside it (`<id>LogGroup`, `<id>Role`).
 */
export class InventoryFunction extends NodejsFunction {
  /** The module under `functions/handlers/` this function runs. */
  readonly handlerModule: string;
  /** What callers invoke, never `$LATEST`: CodeDeploy moves it to each new version (InventoryRollout). */
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
      entry: join(PROJECT_ROOT, 'functions', 'handlers', `${props.handler}.ts`),
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}/package-lock.json`,
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(DEFAULT_FUNCTION_TIMEOUT_SECONDS),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      bundling: BUNDLING,
      environment: {
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_LOG_LEVEL: LOG_LEVEL,
        // Powertools' default in Lambda, written out: the DynamoDB subsegments under active tracing need it.
        POWERTOOLS_TRACE_ENABLED: 'true',
        ...props.environment,
      },
    });
    this.handlerModule = props.handler;
    const wildcards = ['X-Ray (xray:PutTraceSegments, xray:PutTelemetryRecords, added by active tracing)'];
    if (props.wildcardAction) wildcards.push(props.wildcardAction);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: `Only ${wildcards.join(' and ')} act on *: they have no resource-level permissions.`,
    });
    this.live = new Alias(this, 'LiveAlias', { aliasName: 'live', version: this.currentVersion });
  }
}
