import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { parseAllowedOrigins } from '../functions/http/cors';
import { STACK_OUTPUTS, STAGES, type StageName } from '../service/names';
import { STAGE_THROTTLING, type ThrottleSettings } from '../service/stage-limits';

export { STAGES, type StageName };

/**
 * Account used when none is configured, so `npm run synth` works offline with no AWS configuration. It is not a real
 * account: `cdk deploy` refuses to deploy a stack whose account differs from the credentials' account.
 */
export const PLACEHOLDER_ACCOUNT = '000000000000';

/** Region used when none is configured. */
export const DEFAULT_REGION = 'eu-west-1';

/** An optional custom domain in front of the API; the stage is mapped under the `v1` base path. */
export interface CustomDomainConfig {
  /** e.g. `inventory.example.com`. */
  domainName: string;
  /** ARN of an ACM certificate for `domainName` in the stack's region (REGIONAL endpoint). */
  certificateArn: string;
  /** Route 53 hosted zone to create the alias record in. @default no DNS record (create it yourself) */
  hostedZone?: { hostedZoneId: string; zoneName: string };
}

/** Thresholds of the stage's alarms, and where they go. */
export interface AlarmConfig {
  /**
   * Alarm when more than this fraction of API requests answer 5xx in a period (0.01 = 1 %), leaving out the designed
   * 501s; the same fraction applies to the functions' own faults (InternalError + StorageUnavailable).
   */
  serverErrorRate: number;
  /** The rate alarms stay quiet in a period with fewer requests than this: one failure in three is not an outage. */
  minRequests: number;
  /** Alarm when a buffered route's p99 latency reaches this many milliseconds (streamed routes: see below). */
  p99LatencyMs: number;
  /** Alarm when one GET /inventory answer lists this many entries: the list nears what the function can hold. */
  listedEntries: number;
  /** Alarm when a table's consumed read units per second reach this fraction of its read cap. */
  readCapacityShare: number;
  /** Length of one evaluation period. */
  period: Duration;
  /** Periods an alarm looks at. */
  evaluationPeriods: number;
  /** Breaching periods among them before it fires. */
  datapointsToAlarm: number;
  /** Address subscribed to the alarm topic (it must confirm the subscription). @default no subscription */
  email?: string;
  /** An SNS topic (e.g. the on-call's) that receives every alarm too. @default none */
  topicArn?: string;
  /** Whether `npm run deploy:<stage>` refuses to deploy with neither an e-mail nor a topic. */
  destinationRequired: boolean;
}

/** The stock change history (fed by the inventory table's stream). */
export interface HistoryConfig {
  /**
   * Days a history row is kept before DynamoDB's TTL deletes it (`<stage>:historyRetentionDays`).
   * @default 90 on staging, 730 (2 years) on production
   */
  retentionDays: number;
  /** Alarm when the history function is this far behind the stream (its `IteratorAge`). */
  iteratorAgeAlarm: Duration;
}

/** How a deploy moves traffic to the new function versions (CodeDeploy predefined configurations). */
export type TrafficShifting = 'CANARY_10PERCENT_5MINUTES' | 'ALL_AT_ONCE';

/** The production web ACL in front of the stage. */
export interface FirewallConfig {
  /** Requests one client IP may send per minute before WAF answers 429 for the rest of the minute. */
  requestsPerIpPerMinute: number;
}

/** A webhook subscriber of a stage (docs/deploying.md, "Webhooks"). */
export interface WebhookSubscriber {
  /** Names its queue, secret and function: lower-case letters, digits and `-`, unique in the stage. */
  name: string;
  /** Where each change is POSTed: https only. */
  url: string;
  /** Deliver functions running at once: with batches of 10, the most requests in flight to it. @default 2 (Lambda's least) */
  maxConcurrency: number;
}

/** Everything that differs between stages, in one typed place. */
export interface StageConfig<Name extends string = StageName> {
  /** The stage's name: every function's `STAGE`, the `stage` dimension of its metrics and alarms. */
  stage: Name;
  /** Explicit account and region of the stack. */
  env: { account: string; region: string };
  /** Stage-wide API Gateway throttling (steady requests per second and burst). */
  throttling: ThrottleSettings;
  /** Retention of function logs and API access logs. */
  logRetention: RetentionDays;
  alarms: AlarmConfig;
  /**
   * Most read request units per second each on-demand table may consume (DynamoDB throttles past it, and the
   * functions answer 503 with Retry-After): a client storm costs at most this much.
   */
  maxReadRequestUnits: { inventory: number; inventoryListIndex: number; apiKeys: number; history: number };
  /** Read units per second one list may average (`LIST_READ_UNITS_PER_SECOND`): {@link listReadPace}. */
  listReadUnitsPerSecond: number;
  /**
   * Concurrency reserved for the list function, also its most; `off` runs without one, on purpose (docs/deploying.md,
   * "List concurrency"). @default unset
   */
  listReservedConcurrency?: number | 'off';
  /** Whether a real account needs `listReservedConcurrency` said (a number or `off`) before it synthesizes. */
  listConcurrencyRequired: boolean;
  history: HistoryConfig;
  /** Who gets each change as a signed webhook (`<stage>:webhooks`, JSON). @default none */
  webhooks: readonly WebhookSubscriber[];
  /** How each deploy shifts traffic to the new versions behind the `live` aliases. */
  trafficShifting: TrafficShifting;
  /** @default none: no web ACL in front of the stage */
  firewall?: FirewallConfig;
  /** The sunset of `GET /pets/{petId}` (ISO date, its `Sunset` header). @default none */
  petsSunsetAt?: string;
  /** Browser origins allowed by CORS. @default none: no CORS headers, no preflight methods */
  corsOrigins: readonly string[];
  /** @default none: the API answers on its execute-api URL only */
  customDomain?: CustomDomainConfig;
  /** What happens to tables and log groups when the stack is deleted, and whether tables refuse deletion. */
  stateful: { removalPolicy: RemovalPolicy; deletionProtection: boolean };
}

/**
 * The list's pace for the list index's read cap: half of it, in whole units (`LIST_READ_UNITS_PER_SECOND` is read
 * as an integer), so a list alone is never throttled and a second one fits beside it.
 */
export function listReadPace(maxReadRequestUnits: number): number {
  return Math.floor(maxReadRequestUnits / 2);
}

/** Reads configuration from CDK context (`-c key=value`) first, then the environment. */
export type Lookup = (contextKey: string | undefined, envName: string) => string | undefined;

/** Builds a lookup over CDK context and environment variables. */
export function contextLookup(tryGetContext: (key: string) => unknown, env: NodeJS.ProcessEnv = process.env): Lookup {
  return (contextKey, envName) => {
    const fromContext = contextKey === undefined ? undefined : tryGetContext(contextKey);
    if (typeof fromContext === 'string' && fromContext.length > 0) return fromContext;
    const fromEnv = env[envName];
    return fromEnv !== undefined && fromEnv.length > 0 ? fromEnv : undefined;
  };
}

/**
 * The configuration of a stage: each setting from context `<stage>:<key>`, else `PETSTORE_<STAGE>_<KEY>` (the keys and
 * fallbacks: docs/deploying.md, "Before the first deploy" and "Stage configuration").
 */
export function stageConfig(stage: StageName, lookup: Lookup = () => undefined): StageConfig {
  const get = (key: string) => lookup(`${stage}:${key}`, settingEnvName(stage, key));
  const count = (key: string, unit: string) => positiveInteger(get(key), `${stage}:${key}`, unit);
  // Staging may follow the CLI's credentials; production never guesses its account.
  const fromCli = (envName: string) => (stage === 'staging' ? lookup(undefined, envName) : undefined);
  const production = stage === 'production';
  // They bound what a client storm costs; what a list of the largest inventory needs of them is worked out in
  // docs/deploying.md, "Why these read caps".
  const maxReadRequestUnits = production
    ? { inventory: 4000, inventoryListIndex: 2000, apiKeys: 1000, history: 500 }
    : { inventory: 1000, inventoryListIndex: 500, apiKeys: 200, history: 100 };

  return {
    stage,
    env: {
      account: get('account') ?? fromCli('CDK_DEFAULT_ACCOUNT') ?? PLACEHOLDER_ACCOUNT,
      region: get('region') ?? fromCli('CDK_DEFAULT_REGION') ?? DEFAULT_REGION,
    },
    throttling: STAGE_THROTTLING[stage],
    logRetention: production ? RetentionDays.THREE_MONTHS : RetentionDays.TWO_WEEKS,
    alarms: alarmConfig(production, get),
    maxReadRequestUnits,
    listReadUnitsPerSecond: listReadPace(maxReadRequestUnits.inventoryListIndex),
    listReservedConcurrency:
      get('listReservedConcurrency') === 'off'
        ? 'off'
        : count('listReservedConcurrency', 'concurrent executions, or off'),
    // A read key could otherwise hold the account's concurrency with lists its client abandoned.
    listConcurrencyRequired: production,
    history: {
      retentionDays: count('historyRetentionDays', 'days') ?? (production ? 730 : 90),
      // Normally under a second; a minute behind in production means the history function is failing or throttled.
      iteratorAgeAlarm: production ? Duration.minutes(1) : Duration.minutes(5),
    },
    webhooks: parseWebhookSubscribers(get('webhooks'), `${stage}:webhooks`),
    // Staging goes through the same CodeDeploy machinery at once, so a broken deployment setup fails there first.
    trafficShifting: production ? 'CANARY_10PERCENT_5MINUTES' : 'ALL_AT_ONCE',
    firewall: production ? { requestsPerIpPerMinute: 600 } : undefined,
    petsSunsetAt: get('petsSunsetAt'),
    corsOrigins: parseAllowedOrigins(get('corsOrigins')),
    customDomain: readCustomDomain(get),
    stateful: production
      ? { removalPolicy: RemovalPolicy.RETAIN, deletionProtection: true }
      : { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false },
  };
}

/** The environment variable of a stage's setting: `alarmEmail` of production is `PETSTORE_PRODUCTION_ALARM_EMAIL`. */
function settingEnvName(stage: StageName, key: string): string {
  return `PETSTORE_${stage.toUpperCase()}_${key.replace(/[A-Z]/g, '_$&').toUpperCase()}`;
}

/** The stage's alarm thresholds, with the e-mail and topic it reads. */
function alarmConfig(production: boolean, get: (key: string) => string | undefined): AlarmConfig {
  return {
    serverErrorRate: production ? 0.01 : 0.05,
    minRequests: production ? 20 : 10,
    p99LatencyMs: production ? 1000 : 2000,
    // Three quarters of the largest list a client reading it plain can get: Lambda streams at most 200 MB
    // (docs/performance.md, "Largest inventory"); gzipped lists go far further.
    listedEntries: 2_500_000,
    readCapacityShare: 0.8,
    // One-minute periods in production, so an alarm can fire within the 5-minute canary and roll it back.
    period: production ? Duration.minutes(1) : Duration.minutes(5),
    evaluationPeriods: production ? 3 : 2,
    datapointsToAlarm: 2,
    email: get('alarmEmail'),
    topicArn: get('alarmTopicArn'),
    destinationRequired: production,
  };
}

/** A positive integer setting, or undefined when unset. @throws Error naming the setting and its unit */
function positiveInteger(raw: string | undefined, name: string, unit: string): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer (${unit}); got "${raw}"`);
  return value;
}

/**
 * A stage's subscribers from JSON (`[{"name":"till","url":"https://…","maxConcurrency":2}]`); unset, none.
 * @throws Error in one line naming what is wrong
 */
export function parseWebhookSubscribers(raw: string | undefined, setting: string): WebhookSubscriber[] {
  if (raw === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error(`${setting} must be a JSON array of {"name", "url", "maxConcurrency"?}; got ${raw}`);
  }
  if (!Array.isArray(value)) throw new Error(`${setting} must be a JSON array of {"name", "url", "maxConcurrency"?}`);
  const subscribers = value.map((entry: unknown, index) => webhookSubscriber(entry, `${setting}[${index}]`));
  const names = subscribers.map((subscriber) => subscriber.name);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined)
    throw new Error(`${setting} names the subscriber "${repeated}" twice: names must be unique`);
  return subscribers;
}

function webhookSubscriber(entry: unknown, where: string): WebhookSubscriber {
  const { name, url, maxConcurrency = 2, ...rest } = (entry ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (typeof entry !== 'object' || Array.isArray(entry) || unknown.length > 0)
    throw new Error(
      `${where} must be {"name", "url", "maxConcurrency"?}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`,
    );
  if (typeof name !== 'string' || name.length > 40 || !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name))
    throw new Error(`${where}.name must be up to 40 lower-case letters and digits, words joined by single -`);
  if (typeof url !== 'string' || !URL.canParse(url) || new URL(url).protocol !== 'https:')
    throw new Error(`${where}.url must be an https URL; got ${JSON.stringify(url)}`);
  if (!Number.isInteger(maxConcurrency) || (maxConcurrency as number) < 2 || (maxConcurrency as number) > 1000)
    throw new Error(
      `${where}.maxConcurrency must be a whole number from 2 to 1000 (Lambda's range); got ${maxConcurrency}`,
    );
  return { name, url, maxConcurrency: maxConcurrency as number };
}
function readCustomDomain(get: (key: string) => string | undefined): CustomDomainConfig | undefined {
  const domainName = get('domainName');
  if (!domainName) {
    // Set without a domain they would do nothing, without a word.
    const stray = ['certificateArn', 'hostedZoneId', 'hostedZoneName'].filter((key) => get(key));
    if (stray.length > 0)
      throw new Error(`${stray.join(', ')} set without a domainName: set the domainName too, or none`);
    return undefined;
  }
  const certificateArn = get('certificateArn');
  if (!certificateArn) throw new Error(`A custom domain (${domainName}) needs a certificateArn as well`);
  const hostedZoneId = get('hostedZoneId');
  const zoneName = get('hostedZoneName');
  // Route 53 needs both to make the record; one alone would silently make none.
  if (Boolean(hostedZoneId) !== Boolean(zoneName))
    throw new Error(
      `A custom domain's DNS record (${domainName}) needs both hostedZoneId and hostedZoneName, or neither ` +
        `(then point ${domainName} at the stack's ${STACK_OUTPUTS.customDomainTarget} output yourself)`,
    );
  return {
    domainName,
    certificateArn,
    hostedZone: hostedZoneId && zoneName ? { hostedZoneId, zoneName } : undefined,
  };
}

/**
 * What a stage still lacks before it may reach a real account (production without an alarm destination, or without
 * a decision on the list's reserved concurrency), each naming the setting to set. Empty when the stage is complete.
 */
export function missingSettings(config: StageConfig): string[] {
  const { stage, alarms } = config;
  const env = (key: string) => settingEnvName(stage, key);
  const problems: string[] = [];
  if (alarms.destinationRequired && !alarms.email && !alarms.topicArn) {
    problems.push(
      `${stage} has no alarm destination: set ${stage}:alarmEmail or ${stage}:alarmTopicArn ` +
        `(-c ${stage}:alarmEmail=oncall@example.com, or ${env('alarmEmail')} / ${env('alarmTopicArn')})`,
    );
  }
  if (config.listConcurrencyRequired && config.listReservedConcurrency === undefined) {
    problems.push(
      `${stage} has no list concurrency: set ${stage}:listReservedConcurrency to the executions lists may hold ` +
        `(10 is generous; docs/deploying.md, "List concurrency"), or to off ` +
        `(-c ${stage}:listReservedConcurrency=10, or ${env('listReservedConcurrency')})`,
    );
  }
  return problems;
}

/**
 * Refuses any synth or deploy of a real account's incomplete stage, naming the settings to set; the placeholder
 * account, never deployable, keeps offline synth working (docs/deploying.md, "Before the first deploy").
 */
export function assertComplete(config: StageConfig): void {
  if (config.env.account === PLACEHOLDER_ACCOUNT) return;
  const problems = missingSettings(config);
  if (problems.length > 0)
    throw new Error(
      `Refusing to synthesize ${config.stage} for account ${config.env.account}: ${problems.join('; ')}.`,
    );
}

/**
 * Refuses, naming the settings to set, a deploy of an incomplete stage or of the placeholder account: the app calls it
 * when `-c deploying=<stage>` (the `npm run deploy:<stage>` scripts) names this stage.
 */
export function assertDeployable(config: StageConfig): void {
  const { stage } = config;
  const problems = missingSettings(config);
  if (config.env.account === PLACEHOLDER_ACCOUNT) {
    problems.push(
      `its account is the placeholder ${PLACEHOLDER_ACCOUNT}: set ${stage}:account ` +
        `(-c ${stage}:account=<id>, or ${settingEnvName(stage, 'account')})`,
    );
  }
  if (problems.length > 0) throw new Error(`Refusing to deploy ${stage}: ${problems.join('; ')}.`);
}
