import { Arn, ArnFormat, type CfnElement, CfnOutput, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ENV } from '../functions/config';
import type { ProbeTarget } from '../functions/deploy/pre-traffic';
import {
  API_KEYS_TABLE_KEY,
  IDEMPOTENCY_TABLE_KEY,
  INVENTORY_LIST_INDEX,
  INVENTORY_STREAM_VIEW,
  INVENTORY_TABLE_KEY,
  STACK_OUTPUTS,
} from '../service/names';
import {
  AUTHORIZER_HANDLER,
  AUTHORIZER_TIMEOUT_SECONDS,
  LIST_INVENTORY_TIMEOUT_SECONDS,
  ROUTES,
  type TableAccess,
} from '../service/routes';
import { InventoryFirewall } from './constructs/firewall';
import { InventoryApi } from './constructs/inventory-api';
import { InventoryFunction, LIST_INVENTORY_MEMORY_MB } from './constructs/inventory-function';
import { InventoryHistory } from './constructs/inventory-history';
import { Monitoring } from './constructs/monitoring';
import { InventoryRollout } from './constructs/rollout';
import { SelfCheck, STACK_STATUS_ACTIONS } from './constructs/self-check';
import { attributeType, tableDefaults } from './constructs/table-defaults';
import type { StageConfig } from './stage-config';

/** Properties of an {@link InventoryStack}. */
export interface InventoryStackProps extends Omit<StackProps, 'env'> {
  config: StageConfig;
}

/** DynamoDB actions on one resource of the stack. */
interface TableGrant {
  actions: readonly string[];
  on: 'table' | 'listIndex' | 'idempotencyTable';
}

/**
 * The DynamoDB actions behind each kind of table access, and nothing more: what each handler actually calls, and on
 * what. The list Queries the list index (`table/<name>/index/<index>`), and Scans the table for one page, which is
 * the whole list of a small table (functions/store/inventory-table.ts, `smallTableEntries`).
 */
export const TABLE_ACTIONS: Readonly<Record<TableAccess, readonly TableGrant[]>> = {
  'inventory:read': [
    { actions: ['dynamodb:Query'], on: 'listIndex' },
    { actions: ['dynamodb:Scan'], on: 'table' },
  ],
  'inventory:get': [{ actions: ['dynamodb:GetItem'], on: 'table' }],
  'inventory:write': [{ actions: ['dynamodb:UpdateItem'], on: 'table' }],
  // Powertools' DynamoDB layer: claim a key (PutItem), read a first answer the claim did not return (GetItem), store
  // the answer (UpdateItem), release the claim after a fault (DeleteItem).
  'idempotency:write': [
    {
      actions: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      on: 'idempotencyTable',
    },
  ],
};

/** The authorizer looks a key up by its hash, nothing else. */
export const AUTHORIZER_TABLE_ACTIONS: readonly string[] = ['dynamodb:GetItem'];

/**
 * One stage of the pet store inventory service: the inventory and API-key tables, one function per route plus the
 * authorizer (each invoked through its `live` alias, shifted by CodeDeploy), the REST API with its `v1` stage
 * (behind a WAF web ACL where the stage configures one), the stock change history (the inventory table's stream, a
 * history function and its table), and the alarms and dashboard watching them. It needs the account stack of its
 * account and region (API Gateway's CloudWatch role) deployed first; the app adds that dependency.
 *
 * Construct IDs of the tables (`InventoryTable`, `ApiKeysTable`, `History/Table`) must never change: a new ID is a
 * new table.
 */
export class InventoryStack extends Stack {
  readonly config: StageConfig;
  readonly inventoryTable: Table;
  readonly apiKeysTable: Table;
  /** The first answers to PATCHes sent with an Idempotency-Key, kept 24 h (TTL). */
  readonly idempotencyTable: Table;
  readonly history: InventoryHistory;
  /** Functions by operationId, plus `authorizer` and `history`. */
  readonly functions = new Map<string, InventoryFunction>();
  readonly api: InventoryApi;
  readonly monitoring: Monitoring;
  /** Calls the stage as a client after each deployment; a failed check rolls the deployment back. */
  readonly selfCheck: SelfCheck;
  readonly rollout: InventoryRollout;
  /** CodeDeploy's BeforeAllowTraffic hook of every deployment group. */
  readonly preTrafficHook: InventoryFunction;
  /** The web ACL in front of the stage, where the stage configures one. */
  readonly firewall?: InventoryFirewall;

  constructor(scope: Construct, id: string, props: InventoryStackProps) {
    const { config } = props;
    super(scope, id, {
      ...props,
      env: config.env,
      description: `Pet store inventory API (${config.stage})`,
      terminationProtection: config.stateful.deletionProtection,
    });
    this.config = config;

    const stateful = tableDefaults(config.stateful);
    this.inventoryTable = new Table(this, 'InventoryTable', {
      ...stateful,
      maxReadRequestUnits: config.maxReadRequestUnits.inventory,
      partitionKey: { name: INVENTORY_TABLE_KEY.name, type: attributeType(INVENTORY_TABLE_KEY.type) },
      // Every write, whoever makes it, reaches the history: before and after images carry the change and its origin.
      stream: StreamViewType[INVENTORY_STREAM_VIEW],
    });
    // The list's ordered read path (functions/store/inventory-table.ts): only what the list answers is projected, and
    // its own read cap bounds what lists cost.
    this.inventoryTable.addGlobalSecondaryIndex({
      indexName: INVENTORY_LIST_INDEX.name,
      partitionKey: {
        name: INVENTORY_LIST_INDEX.partition.name,
        type: attributeType(INVENTORY_LIST_INDEX.partition.type),
      },
      sortKey: { name: INVENTORY_LIST_INDEX.sort.name, type: attributeType(INVENTORY_LIST_INDEX.sort.type) },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...INVENTORY_LIST_INDEX.projected],
      maxReadRequestUnits: config.maxReadRequestUnits.inventoryListIndex,
    });
    this.apiKeysTable = new Table(this, 'ApiKeysTable', {
      ...stateful,
      maxReadRequestUnits: config.maxReadRequestUnits.apiKeys,
      partitionKey: { name: API_KEYS_TABLE_KEY.name, type: attributeType(API_KEYS_TABLE_KEY.type) },
    });
    this.idempotencyTable = new Table(this, 'IdempotencyTable', {
      ...stateful,
      partitionKey: { name: IDEMPOTENCY_TABLE_KEY.name, type: attributeType(IDEMPOTENCY_TABLE_KEY.type) },
      timeToLiveAttribute: IDEMPOTENCY_TABLE_KEY.timeToLive,
    });

    /** What each kind of access in {@link TABLE_ACTIONS} is granted on. */
    const grantResources = {
      table: this.inventoryTable.tableArn,
      listIndex: `${this.inventoryTable.tableArn}/index/${INVENTORY_LIST_INDEX.name}`,
      idempotencyTable: this.idempotencyTable.tableArn,
    };

    const functionDefaults = {
      logRetention: config.logRetention,
      logRemovalPolicy: config.stateful.removalPolicy,
      logLevel: config.logLevel,
    };
    const routeFunctions = new Map<string, InventoryFunction>();
    for (const route of ROUTES) {
      const environment: Record<string, string> = { [ENV.stage]: config.stage };
      if (route.access.some((access) => access.startsWith('inventory:')))
        environment[ENV.inventoryTable] = this.inventoryTable.tableName;
      if (route.access.includes('idempotency:write'))
        environment[ENV.idempotencyTable] = this.idempotencyTable.tableName;
      if (config.corsOrigins.length > 0) environment[ENV.corsAllowedOrigins] = config.corsOrigins.join(',');
      if (route.access.includes('inventory:read'))
        environment[ENV.listReadUnitsPerSecond] = String(config.listReadUnitsPerSecond);
      if (route.deprecated) {
        environment[ENV.petsDeprecatedAt] = config.pets.deprecatedAt;
        if (config.pets.sunsetAt) environment[ENV.petsSunsetAt] = config.pets.sunsetAt;
      }
      const fn = new InventoryFunction(this, functionId(route.operationId), {
        ...functionDefaults,
        handler: route.handler,
        description: `${route.method} ${route.path} (${route.operationId})`,
        environment,
        ...(route.operationId === 'listInventory'
          ? {
              memorySize: LIST_INVENTORY_MEMORY_MB,
              ...(typeof config.listReservedConcurrency === 'number'
                ? { reservedConcurrentExecutions: config.listReservedConcurrency }
                : {}),
            }
          : {}),
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
      });
      // Not `table.grant`: on a table with an index it grants `index/*` too, and only the list reads the index.
      for (const access of route.access)
        for (const { actions, on } of TABLE_ACTIONS[access])
          Grant.addToPrincipal({ grantee: fn, actions: [...actions], resourceArns: [grantResources[on]] });
      this.functions.set(route.operationId, fn);
      routeFunctions.set(route.operationId, fn);
    }

    const authorizer = new InventoryFunction(this, 'AuthorizerFunction', {
      ...functionDefaults,
      handler: AUTHORIZER_HANDLER,
      description: 'TOKEN authorizer: checks the bearer API key against the keys table',
      timeout: Duration.seconds(AUTHORIZER_TIMEOUT_SECONDS),
      environment: { [ENV.apiKeysTable]: this.apiKeysTable.tableName, [ENV.stage]: config.stage },
    });
    this.apiKeysTable.grant(authorizer, ...AUTHORIZER_TABLE_ACTIONS);
    this.functions.set(AUTHORIZER_HANDLER, authorizer);

    this.history = new InventoryHistory(this, 'History', {
      inventoryTable: this.inventoryTable,
      stage: config.stage,
      retentionDays: config.history.retentionDays,
      maxReadRequestUnits: config.maxReadRequestUnits.history,
      removalPolicy: config.stateful.removalPolicy,
      deletionProtection: config.stateful.deletionProtection,
      logRetention: config.logRetention,
      logLevel: config.logLevel,
    });
    this.functions.set(HISTORY_FUNCTION, this.history.function);

    this.api = new InventoryApi(this, 'InventoryApi', {
      routeFunctions: new Map<string, IFunction>([...routeFunctions].map(([name, fn]) => [name, fn.live])),
      authorizerFunction: authorizer.live,
      authorizerCacheTtlSeconds: config.authorizerCacheTtlSeconds,
      throttling: config.throttling,
      accessLogRetention: config.logRetention,
      accessLogRemovalPolicy: config.stateful.removalPolicy,
      corsOrigins: config.corsOrigins,
      ...(config.customDomain ? { customDomain: config.customDomain } : {}),
    });

    const stage = this.api.api.deploymentStage;
    if (config.firewall) {
      this.firewall = new InventoryFirewall(this, 'Firewall', {
        ...config.firewall,
        stage,
        corsOrigins: config.corsOrigins,
      });
    } else {
      Validations.of(stage).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason:
          'Only production has a WAF web ACL (InventoryFirewall). This stage serves the team and its tests: every ' +
          'method needs an API key (malformed headers never reach the authorizer), the stage is throttled, and its ' +
          'tables have a read cap.',
      });
    }
    this.selfCheck = new SelfCheck(this, 'SelfCheck', {
      api: this.api,
      functions: this.functions.values(),
      // The check is of the stage as clients reach it: after the web ACL is attached.
      after: this.firewall ? [this.firewall] : [],
      apiKeysTable: this.apiKeysTable,
      ...functionDefaults,
    });

    this.monitoring = new Monitoring(this, 'Monitoring', {
      stageName: config.stage,
      stage,
      notImplementedRoutes: ROUTES.filter((route) => route.notImplemented),
      latencyRoutes: ROUTES.filter((route) => !route.streaming),
      list: {
        function: routeFunctions.get('listInventory') as InventoryFunction,
        timeout: Duration.seconds(LIST_INVENTORY_TIMEOUT_SECONDS),
      },
      routeFunctions,
      authorizerFunction: authorizer,
      history: {
        function: this.history.function,
        failedRecords: this.history.failedRecords,
        iteratorAgeAlarm: config.history.iteratorAgeAlarm,
      },
      tables: new Map([
        ['inventory', { table: this.inventoryTable, maxReadRequestUnits: config.maxReadRequestUnits.inventory }],
        ['apiKeys', { table: this.apiKeysTable, maxReadRequestUnits: config.maxReadRequestUnits.apiKeys }],
        ['history', { table: this.history.table, maxReadRequestUnits: config.maxReadRequestUnits.history }],
        // Uncapped (on demand), so no read-capacity alarm; its failures are keyed PATCHes' 503s, or answers given but
        // not kept for a repeat (logged 'idempotent answer not kept').
        ['idempotency', { table: this.idempotencyTable }],
      ]),
      listIndex: {
        table: this.inventoryTable,
        indexName: INVENTORY_LIST_INDEX.name,
        maxReadRequestUnits: config.maxReadRequestUnits.inventoryListIndex,
      },
      alarms: config.alarms,
      keyRemovalPolicy: config.stateful.removalPolicy,
    });
    this.selfCheck.checkAlarmDelivery({
      topic: this.monitoring.topic,
      onCallTopic: config.alarms.topicArn !== undefined,
      required: config.alarms.destinationRequired,
    });

    const probes = new Map<string, ProbeTarget>();
    for (const route of ROUTES) probes.set(route.operationId, { route: route.operationId });
    probes.set(AUTHORIZER_HANDLER, { authorizer: true });
    probes.set(HISTORY_FUNCTION, { history: true });
    const preTrafficHook = new InventoryFunction(this, 'PreTrafficHookFunction', {
      ...functionDefaults,
      handler: PRE_TRAFFIC_HOOK_HANDLER,
      description:
        'CodeDeploy BeforeAllowTraffic hook: invokes each new version with a safe request before it takes traffic',
      // The list's probe waits for its first byte, which comes after its Scan.
      timeout: Duration.seconds(LIST_INVENTORY_TIMEOUT_SECONDS + 60),
      environment: {
        // Its own stack, whose status tells a rollback (functions/deploy/stack-status.ts).
        [ENV.stackId]: Stack.of(this).stackId,
        [ENV.preTrafficTargets]: Stack.of(this).toJsonString(
          Object.fromEntries(
            [...this.functions].map(([name, fn]) => [fn.functionName, probes.get(name) as ProbeTarget]),
          ),
        ),
      },
    });
    this.preTrafficHook = preTrafficHook;

    this.rollout = new InventoryRollout(this, 'Rollout', {
      trafficShifting: config.trafficShifting,
      period: config.alarms.period,
      preTrafficHook,
      functions: new Map(
        [...this.functions].map(([name, fn]) => [name, { function: fn, errorsAreFaults: name !== AUTHORIZER_HANDLER }]),
      ),
    });
    const hookRole = preTrafficHook.role as Role;
    for (const fn of this.functions.values()) {
      Validations.of(hookRole).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(fn.node.defaultChild as CfnElement)}.Arn>:*]`,
        reason:
          'The pre-traffic hook invokes the version a deployment moves the live alias to (`name:<version>`), ' +
          "which is only known when CodeDeploy runs: every version (and the live alias, which IAM's * also matches) " +
          "of the stage's own functions, nothing else.",
      });
    }
    Validations.of(hookRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:${this.partition}:codedeploy:${this.region}:${this.account}:deploymentgroup:<${this.getLogicalId(this.rollout.application.node.defaultChild as CfnElement)}>/*]`,
      reason:
        'The hook reports its verdict for the deployment group that called it: ' +
        "the deployment groups of this stage's CodeDeploy application only (naming each would make a cycle: the " +
        'groups name the hook).',
    });
    // Its stack's status, asked only after a failed probe: a rollback's probes of the versions it restores only warn.
    preTrafficHook.addToRolePolicy(
      new PolicyStatement({ actions: [...STACK_STATUS_ACTIONS], resources: [Stack.of(this).stackId] }),
    );
    preTrafficHook.addToRolePolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        // The hook invokes only the version a deployment moves to (`name:<version>`, known when CodeDeploy runs).
        // `name:*` allows every qualifier, the `live` alias clients use included: IAM has no versions-only pattern.
        resources: [...this.functions.values()].map((fn) => `${fn.functionArn}:*`),
      }),
    );
    // Which resource CodeDeploy authorizes these two reads on is documented two ways: the Service Authorization
    // Reference lists no resource type ("you must specify all resources (*)"), CodeDeploy's permissions reference names
    // the deployment group. A grant on the groups alone would, on the first reading, leave the hook unable to find the
    // version it checks, and every deploy would roll back; `*` holds on both. They read which function and version a
    // deployment moves, nothing more.
    preTrafficHook.addToRolePolicy(
      new PolicyStatement({
        actions: ['codedeploy:ListDeploymentTargets', 'codedeploy:GetDeploymentTarget'],
        resources: ['*'],
      }),
    );
    Validations.of(hookRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'codedeploy:ListDeploymentTargets and GetDeploymentTarget support no resource-level permissions (Service ' +
        'Authorization Reference, AWS CodeDeploy): read-only, they tell which function and version a deployment moves.',
    });
    // The verdict as AWS SAM's documented hook policy grants it: on the application's deployment groups (the Service
    // Authorization Reference lists no resource type for it either; a first real deploy settles it: npm run integ).
    preTrafficHook.addToRolePolicy(
      new PolicyStatement({
        actions: ['codedeploy:PutLifecycleEventHookExecutionStatus'],
        resources: [
          Arn.format(
            {
              service: 'codedeploy',
              resource: 'deploymentgroup',
              resourceName: `${this.rollout.application.applicationName}/*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            },
            this,
          ),
        ],
      }),
    );

    new CfnOutput(this, STACK_OUTPUTS.apiUrl, {
      value: this.api.url,
      description: 'Base URL of the API (ends in /v1)',
    });
    new CfnOutput(this, STACK_OUTPUTS.inventoryTable, {
      value: this.inventoryTable.tableName,
      description: 'Inventory table (petId -> quantity, status)',
    });
    new CfnOutput(this, STACK_OUTPUTS.apiKeysTable, {
      value: this.apiKeysTable.tableName,
      description: 'API keys table (SHA-256 of each key)',
    });
    new CfnOutput(this, STACK_OUTPUTS.historyTable, {
      value: this.history.table.tableName,
      description: 'Inventory history table (every stock change per pet; `inventory history --stage`)',
    });
    new CfnOutput(this, STACK_OUTPUTS.restApiId, {
      value: this.api.api.restApiId,
      description: 'REST API id: `keys revoke --stage` flushes its authorizer cache',
    });
    new CfnOutput(this, STACK_OUTPUTS.apiStageName, {
      value: stage.stageName,
      description: 'API Gateway stage of the REST API',
    });
    if (this.api.customDomainTarget) {
      new CfnOutput(this, STACK_OUTPUTS.customDomainTarget, {
        value: this.api.customDomainTarget,
        description: `Regional host the custom domain's CNAME points at (with no hosted zone configured)`,
      });
    }
    new CfnOutput(this, STACK_OUTPUTS.authorizerCacheTtlSeconds, {
      value: String(config.authorizerCacheTtlSeconds),
      description: 'Seconds an authorizer decision is cached (keys revoke --stage flushes the cache)',
    });
  }
}

/** The pre-traffic hook's module under `functions/handlers/`. */
export const PRE_TRAFFIC_HOOK_HANDLER = 'pre-traffic-hook';

/** The history function's name in {@link InventoryStack.functions}, its monitoring and its deployment group. */
export const HISTORY_FUNCTION = 'history';

/** `listInventory` -> `ListInventoryFunction`. */
export function functionId(operationId: string): string {
  return `${operationId.charAt(0).toUpperCase()}${operationId.slice(1)}Function`;
}
