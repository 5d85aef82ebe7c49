import { CfnOutput, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { ENV } from '../functions/config';
import type { ProbeTarget } from '../functions/deploy/pre-traffic';
import {
  API_KEYS_TABLE_KEY,
  FEED_COUNTER_KEY,
  HISTORY_FEED_INDEX,
  IDEMPOTENCY_TABLE_KEY,
  INVENTORY_LIST_INDEX,
  INVENTORY_STREAM_VIEW,
  INVENTORY_TABLE_KEY,
  STACK_OUTPUTS,
} from '../service/names';
import {
  AUTHORIZER_HANDLER,
  AUTHORIZER_TIMEOUT_SECONDS,
  PETS_DEPRECATED_AT,
  ROUTES,
  type Route,
  type TableAccess,
} from '../service/routes';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '../service/stage-limits';
import { InventoryFirewall } from './constructs/firewall';
import { InventoryApi } from './constructs/inventory-api';
import {
  InventoryFunction,
  type InventoryFunctionProps,
  LIST_INVENTORY_MEMORY_MB,
  pascalCase,
} from './constructs/inventory-function';
import { InventoryHistory } from './constructs/inventory-history';
import { Monitoring } from './constructs/monitoring';
import { PreTrafficHook } from './constructs/pre-traffic-hook';
import { InventoryRollout } from './constructs/rollout';
import { SelfCheck } from './constructs/self-check';
import { keyAttribute, tableDefaults } from './constructs/table-defaults';
import { Webhooks } from './constructs/webhooks';
import type { StageConfig } from './stage-config';

export interface InventoryStackProps extends Omit<StackProps, 'env'> {
  config: StageConfig<string>;
}

/** DynamoDB actions on one resource of the stack. */
interface TableGrant {
  actions: readonly string[];
  on: 'table' | 'listIndex' | 'idempotencyTable' | 'historyTable' | 'feedIndex';
  /** Only the items of these partition keys (`dynamodb:LeadingKeys`). @default every item */
  leadingKeys?: readonly string[];
}

/** The DynamoDB actions each kind of table access makes, and on what: the list only Queries its index. */
export const TABLE_ACTIONS: Readonly<Record<TableAccess, readonly TableGrant[]>> = {
  'inventory:read': [{ actions: ['dynamodb:Query'], on: 'listIndex' }],
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
  // One pet's changes, a page at a time: a Query of its partition, nothing else of the table.
  'history:read': [{ actions: ['dynamodb:Query'], on: 'historyTable' }],
  // The change feed: a Query of the feed index, nothing of the table.
  'history:feed': [{ actions: ['dynamodb:Query'], on: 'feedIndex' }],
  // The feed's position: a GetItem of the counter row, no other row.
  'history:position': [{ actions: ['dynamodb:GetItem'], on: 'historyTable', leadingKeys: [FEED_COUNTER_KEY.petId] }],
};

/** The IAM condition that limits DynamoDB item actions to the items under these partition keys. */
function leadingKeysCondition(keys: readonly string[]): Record<string, Record<string, string[]>> {
  return { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [...keys] } };
}

/** The stage-wide settings every function of the stack shares. */
type FunctionDefaults = Pick<InventoryFunctionProps, 'logRetention' | 'logRemovalPolicy'>;

/**
 * One stage (docs/deploying.md). The construct IDs of the tables (`InventoryTable`, `ApiKeysTable`, `IdempotencyTable`,
 * `History/Table`) must never change: a new ID is a new table.
 */
export class InventoryStack extends Stack {
  private readonly config: StageConfig<string>;
  readonly inventoryTable: Table;
  readonly apiKeysTable: Table;
  /** The first answers to PATCHes sent with an Idempotency-Key (TTL 24 h). */
  private readonly idempotencyTable: Table;
  private readonly history: InventoryHistory;
  /** Functions by operationId, plus `authorizer`, `history` and the webhook functions ({@link Webhooks.functions}). */
  readonly functions = new Map<string, InventoryFunction>();
  readonly api: InventoryApi;
  readonly monitoring: Monitoring;
  readonly webhooks: Webhooks;
  readonly selfCheck: SelfCheck;
  readonly rollout: InventoryRollout;

  constructor(scope: Construct, id: string, props: InventoryStackProps) {
    const { config } = props;
    super(scope, id, {
      ...props,
      env: config.env,
      description: `Pet store inventory API (${config.stage})`,
      terminationProtection: config.stateful.deletionProtection,
    });
    this.config = config;
    const functionDefaults: FunctionDefaults = {
      logRetention: config.logRetention,
      logRemovalPolicy: config.stateful.removalPolicy,
    };

    this.inventoryTable = this.addInventoryTable();
    const stateful = tableDefaults(config.stateful);
    this.apiKeysTable = new Table(this, 'ApiKeysTable', {
      ...stateful,
      maxReadRequestUnits: config.maxReadRequestUnits.apiKeys,
      partitionKey: keyAttribute(API_KEYS_TABLE_KEY),
    });
    this.idempotencyTable = new Table(this, 'IdempotencyTable', {
      ...stateful,
      partitionKey: keyAttribute(IDEMPOTENCY_TABLE_KEY),
      timeToLiveAttribute: IDEMPOTENCY_TABLE_KEY.timeToLive,
    });

    // Before the route functions, which read its table; its function joins the map after the authorizer.
    this.history = new InventoryHistory(this, 'History', {
      inventoryTable: this.inventoryTable,
      stage: config.stage,
      retentionDays: config.history.retentionDays,
      maxReadRequestUnits: config.maxReadRequestUnits.history,
      ...config.stateful,
      logRetention: config.logRetention,
    });
    this.addRouteFunctions(functionDefaults);
    const authorizer = this.addAuthorizer(functionDefaults);
    this.functions.set(HISTORY_FUNCTION, this.history.function);
    this.webhooks = new Webhooks(this, 'Webhooks', {
      historyTable: this.history.table,
      subscribers: config.webhooks,
      stage: config.stage,
      removalPolicy: config.stateful.removalPolicy,
      logRetention: config.logRetention,
    });
    for (const [name, fn] of this.webhooks.functions) this.functions.set(name, fn);

    this.api = new InventoryApi(this, 'InventoryApi', {
      ...config,
      functions: this.functions,
      authorizerFunction: authorizer,
    });
    const firewall = this.addFirewall();
    this.monitoring = this.addMonitoring();
    this.webhooks.alarmInto(this.monitoring.topic, {
      onCallTopicArn: config.alarms.topicArn,
      period: config.alarms.period,
    });
    this.selfCheck = new SelfCheck(this, 'SelfCheck', {
      api: this.api,
      functions: this.functions.values(),
      // The check is of the stage as clients reach it: after the web ACL is attached.
      after: firewall ? [firewall] : [],
      apiKeysTable: this.apiKeysTable,
      ...functionDefaults,
    });

    const preTrafficHook = new PreTrafficHook(this, 'PreTrafficHookFunction', {
      ...functionDefaults,
      apiKeysTable: this.apiKeysTable,
      targets: [...this.functions].map(([name, fn]) => ({
        function: fn,
        probe: probeTarget(name, this.webhooks.functions),
      })),
    });
    this.rollout = new InventoryRollout(this, 'Rollout', {
      stageName: config.stage,
      trafficShifting: config.trafficShifting,
      period: config.alarms.period,
      preTrafficHook,
      functions: this.functions,
    });
    preTrafficHook.allowVerdicts(this.rollout.application);
    this.addOutputs();
  }

  /** The inventory table, streaming every write to the history, with the list's index. */
  private addInventoryTable(): Table {
    const { config } = this;
    const table = new Table(this, 'InventoryTable', {
      ...tableDefaults(config.stateful),
      maxReadRequestUnits: config.maxReadRequestUnits.inventory,
      partitionKey: keyAttribute(INVENTORY_TABLE_KEY),
      // Every write, whoever makes it, reaches the history: before and after images carry the change and its origin.
      stream: StreamViewType[INVENTORY_STREAM_VIEW],
    });
    // The list's ordered read path, with its own read cap bounding what lists cost.
    table.addGlobalSecondaryIndex({
      indexName: INVENTORY_LIST_INDEX.name,
      partitionKey: keyAttribute(INVENTORY_LIST_INDEX.partition),
      sortKey: keyAttribute(INVENTORY_LIST_INDEX.sort),
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...INVENTORY_LIST_INDEX.projected],
      maxReadRequestUnits: config.maxReadRequestUnits.inventoryListIndex,
    });
    return table;
  }

  /** One function per route, granted exactly its {@link TABLE_ACTIONS}, in {@link functions} by operationId. */
  private addRouteFunctions(defaults: FunctionDefaults): void {
    /** What each kind of access in {@link TABLE_ACTIONS} is granted on. */
    const grantResources = {
      table: this.inventoryTable.tableArn,
      listIndex: `${this.inventoryTable.tableArn}/index/${INVENTORY_LIST_INDEX.name}`,
      idempotencyTable: this.idempotencyTable.tableArn,
      historyTable: this.history.table.tableArn,
      feedIndex: `${this.history.table.tableArn}/index/${HISTORY_FEED_INDEX.name}`,
    };
    const concurrency = this.config.listReservedConcurrency;
    const listSizing = {
      memorySize: LIST_INVENTORY_MEMORY_MB,
      reservedConcurrentExecutions: typeof concurrency === 'number' ? concurrency : undefined,
    };
    for (const route of ROUTES) {
      const fn = new InventoryFunction(this, functionId(route.operationId), {
        ...defaults,
        handler: route.handler,
        description: `${route.method} ${route.path} (${route.operationId})`,
        environment: this.routeEnvironment(route),
        ...(route.operationId === 'listInventory' ? listSizing : {}),
        timeout: route.timeoutSeconds ? Duration.seconds(route.timeoutSeconds) : undefined,
      });
      // Not `table.grant`: on a table with an index it grants `index/*` too, and only the list reads the index.
      for (const access of route.access)
        for (const { actions, on, leadingKeys } of TABLE_ACTIONS[access])
          fn.addToRolePolicy(
            new PolicyStatement({
              actions: [...actions],
              resources: [grantResources[on]],
              ...(leadingKeys ? { conditions: leadingKeysCondition(leadingKeys) } : {}),
            }),
          );
      this.functions.set(route.operationId, fn);
    }
  }

  /** A route function's environment: its stage, the tables its access reaches, and the settings its handler reads. */
  private routeEnvironment(route: Route): Record<string, string> {
    const { config } = this;
    const environment: Record<string, string> = { [ENV.stage]: config.stage };
    if (route.access.some((access) => access.startsWith('inventory:')))
      environment[ENV.inventoryTable] = this.inventoryTable.tableName;
    if (route.access.includes('idempotency:write')) environment[ENV.idempotencyTable] = this.idempotencyTable.tableName;
    if (route.access.some((access) => access.startsWith('history:')))
      environment[ENV.historyTable] = this.history.table.tableName;
    if (route.access.includes('history:feed'))
      environment[ENV.historyRetentionDays] = String(config.history.retentionDays);
    if (config.corsOrigins.length > 0) environment[ENV.corsAllowedOrigins] = config.corsOrigins.join(',');
    if (route.access.includes('inventory:read'))
      environment[ENV.listReadUnitsPerSecond] = String(config.listReadUnitsPerSecond);
    if (route.deprecated) {
      environment[ENV.petsDeprecatedAt] = PETS_DEPRECATED_AT;
      if (config.petsSunsetAt) environment[ENV.petsSunsetAt] = config.petsSunsetAt;
    }
    return environment;
  }

  /** The TOKEN authorizer's function: it may only look a key up by its hash. */
  private addAuthorizer(defaults: FunctionDefaults): InventoryFunction {
    const authorizer = new InventoryFunction(this, 'AuthorizerFunction', {
      ...defaults,
      handler: AUTHORIZER_HANDLER,
      description: 'TOKEN authorizer: checks the bearer API key against the keys table',
      timeout: Duration.seconds(AUTHORIZER_TIMEOUT_SECONDS),
      environment: { [ENV.apiKeysTable]: this.apiKeysTable.tableName, [ENV.stage]: this.config.stage },
    });
    this.apiKeysTable.grant(authorizer, 'dynamodb:GetItem');
    this.functions.set(AUTHORIZER_HANDLER, authorizer);
    return authorizer;
  }

  /** The web ACL where the stage configures one; elsewhere, cdk-nag is told why there is none. */
  private addFirewall(): InventoryFirewall | undefined {
    const stage = this.api.api.deploymentStage;
    if (this.config.firewall)
      return new InventoryFirewall(this, 'Firewall', {
        ...this.config.firewall,
        stage,
        corsOrigins: this.config.corsOrigins,
      });
    Validations.of(stage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        'Only production has a web ACL. This stage serves the team and its tests: every method needs an API key, ' +
        'the stage is throttled, and its tables have a read cap.',
    });
    return undefined;
  }

  private addMonitoring(): Monitoring {
    const { config } = this;
    const caps = config.maxReadRequestUnits;
    return new Monitoring(this, 'Monitoring', {
      stageName: config.stage,
      stage: this.api.api.deploymentStage,
      functions: this.functions,
      history: this.history,
      historyLagAlarm: config.history.iteratorAgeAlarm,
      tables: new Map([
        ['inventory', { table: this.inventoryTable, maxReadRequestUnits: caps.inventory }],
        ['apiKeys', { table: this.apiKeysTable, maxReadRequestUnits: caps.apiKeys }],
        ['history', { table: this.history.table, maxReadRequestUnits: caps.history }],
        // Uncapped (on demand), so no read-capacity alarm; its failures are keyed PATCHes' 503s, or answers given but
        // not kept for a repeat (logged 'idempotent answer not kept').
        ['idempotency', { table: this.idempotencyTable }],
      ]),
      listIndex: {
        table: this.inventoryTable,
        indexName: INVENTORY_LIST_INDEX.name,
        maxReadRequestUnits: caps.inventoryListIndex,
      },
      alarms: config.alarms,
      keyRemovalPolicy: config.stateful.removalPolicy,
    });
  }

  /** The outputs the operator CLI reads (`--stage`) to find the stage's API and tables. */
  private addOutputs(): void {
    const outputs: [key: string, value: string | undefined, description: string][] = [
      [STACK_OUTPUTS.apiUrl, this.api.url, 'Base URL of the API (ends in /v1)'],
      [STACK_OUTPUTS.inventoryTable, this.inventoryTable.tableName, 'Inventory table (petId -> quantity, status)'],
      [STACK_OUTPUTS.apiKeysTable, this.apiKeysTable.tableName, 'API keys table (SHA-256 of each key)'],
      [
        STACK_OUTPUTS.historyTable,
        this.history.table.tableName,
        'Inventory history table (every stock change per pet; `inventory history --stage`)',
      ],
      [
        STACK_OUTPUTS.restApiId,
        this.api.api.restApiId,
        'REST API id: `keys revoke --stage` flushes its authorizer cache',
      ],
      [STACK_OUTPUTS.apiStageName, this.api.api.deploymentStage.stageName, 'API Gateway stage of the REST API'],
      [
        STACK_OUTPUTS.customDomainTarget,
        this.api.customDomainTarget,
        `Regional host the custom domain's CNAME points at (with no hosted zone configured)`,
      ],
      [
        STACK_OUTPUTS.authorizerCacheTtlSeconds,
        String(AUTHORIZER_CACHE_TTL_SECONDS),
        'Seconds an authorizer decision is cached (keys revoke --stage flushes the cache)',
      ],
    ];
    for (const [key, value, description] of outputs)
      if (value !== undefined) new CfnOutput(this, key, { value, description });
  }
}

/** The history function's name in {@link InventoryStack.functions}, its monitoring and its deployment group. */
const HISTORY_FUNCTION = 'history';

/**
 * What the pre-traffic hook sends a function of {@link InventoryStack.functions}, by its name there: the history and
 * webhook functions, fed batches by event source mappings, get the history's probe (an empty batch).
 */
function probeTarget(name: string, webhookFunctions: ReadonlyMap<string, unknown>): ProbeTarget {
  if (name === AUTHORIZER_HANDLER) return { authorizer: true };
  if (name === HISTORY_FUNCTION || webhookFunctions.has(name)) return { history: true };
  return { route: name };
}

/** `listInventory` -> `ListInventoryFunction`. */
export function functionId(operationId: string): string {
  return `${pascalCase(operationId)}Function`;
}
