import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { parseAllowedOrigins } from '../functions/http/cors';
import { PETS_DEPRECATED_AT } from '../functions/routes';

import { STAGES, type StageName } from './shared-names';

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

/** Thresholds of the stage's alarms. */
export interface AlarmConfig {
  /** Alarm when more than this fraction of API requests answer 5xx in a period (0.01 = 1 %). */
  serverErrorRate: number;
  /** Alarm when the API's p99 latency exceeds this many milliseconds. */
  p99LatencyMs: number;
  /** Alarm when a function reports at least this many errors in a period. */
  functionErrors: number;
  /** Length of one evaluation period. */
  period: Duration;
  /** Consecutive breaching periods before an alarm fires. */
  evaluationPeriods: number;
  /** Address subscribed to the alarm topic (it must confirm the subscription). @default no subscription */
  email?: string;
}

/** Everything that differs between stages, in one typed place. */
export interface StageConfig {
  stage: StageName;
  /** Explicit account and region of the stack. */
  env: { account: string; region: string };
  /** Stage-wide API Gateway throttling (steady requests per second and burst). */
  throttling: { rateLimit: number; burstLimit: number };
  /**
   * Seconds API Gateway caches an authorizer decision per token: also how long a revoked key keeps working.
   * @default 300
   */
  authorizerCacheTtlSeconds: number;
  /** Retention of function logs and API access logs. */
  logRetention: RetentionDays;
  /** Powertools log level of the functions. */
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  alarms: AlarmConfig;
  /** `GET /pets/{petId}`: when it was deprecated (ISO date, `Deprecation` header) and its sunset (`Sunset`). */
  pets: { deprecatedAt: string; sunsetAt?: string };
  /** Browser origins allowed by CORS. @default none: no CORS headers, no preflight methods */
  corsOrigins: readonly string[];
  /** @default none: the API answers on its execute-api URL only */
  customDomain?: CustomDomainConfig;
  /** What happens to tables and log groups when the stack is deleted, and whether tables refuse deletion. */
  stateful: { removalPolicy: RemovalPolicy; deletionProtection: boolean };
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
 * The configuration of a stage. Account and region come from context `<stage>:account` / `<stage>:region` or the
 * environment `PETSTORE_<STAGE>_ACCOUNT` / `PETSTORE_<STAGE>_REGION`; staging also falls back to the CLI's
 * credentials (`CDK_DEFAULT_ACCOUNT` / `CDK_DEFAULT_REGION`); production never guesses (pin it before deploying).
 * Without any of these, the account is {@link PLACEHOLDER_ACCOUNT} and the region {@link DEFAULT_REGION}.
 * The optional alarm e-mail, sunset date, CORS origins (comma-separated) and custom domain read `<stage>:alarmEmail`,
 * `<stage>:petsSunsetAt`, `<stage>:corsOrigins`,
 * `<stage>:domainName`, `<stage>:certificateArn`, `<stage>:hostedZoneId`, `<stage>:hostedZoneName` the same way.
 */
export function stageConfig(stage: StageName, lookup: Lookup = () => undefined): StageConfig {
  const upper = stage.toUpperCase();
  const get = (key: string) =>
    lookup(`${stage}:${key}`, `PETSTORE_${upper}_${key.replace(/[A-Z]/g, '_$&').toUpperCase()}`);
  const fromCli = stage === 'staging';
  const account =
    get('account') ?? (fromCli ? lookup(undefined, 'CDK_DEFAULT_ACCOUNT') : undefined) ?? PLACEHOLDER_ACCOUNT;
  const region = get('region') ?? (fromCli ? lookup(undefined, 'CDK_DEFAULT_REGION') : undefined) ?? DEFAULT_REGION;
  const alarmEmail = get('alarmEmail');
  const sunsetAt = get('petsSunsetAt');
  const customDomain = readCustomDomain(get);
  const production = stage === 'production';

  return {
    stage,
    env: { account, region },
    throttling: production ? { rateLimit: 100, burstLimit: 200 } : { rateLimit: 20, burstLimit: 40 },
    authorizerCacheTtlSeconds: 300,
    logRetention: production ? RetentionDays.THREE_MONTHS : RetentionDays.TWO_WEEKS,
    logLevel: 'INFO',
    alarms: {
      serverErrorRate: production ? 0.01 : 0.05,
      p99LatencyMs: production ? 1000 : 2000,
      functionErrors: 1,
      period: Duration.minutes(5),
      evaluationPeriods: production ? 1 : 2,
      ...(alarmEmail ? { email: alarmEmail } : {}),
    },
    pets: { deprecatedAt: PETS_DEPRECATED_AT, ...(sunsetAt ? { sunsetAt } : {}) },
    corsOrigins: parseAllowedOrigins(get('corsOrigins')),
    ...(customDomain ? { customDomain } : {}),
    stateful: production
      ? { removalPolicy: RemovalPolicy.RETAIN, deletionProtection: true }
      : { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false },
  };
}

function readCustomDomain(get: (key: string) => string | undefined): CustomDomainConfig | undefined {
  const domainName = get('domainName');
  if (!domainName) return undefined;
  const certificateArn = get('certificateArn');
  if (!certificateArn) throw new Error(`A custom domain (${domainName}) needs a certificateArn as well`);
  const hostedZoneId = get('hostedZoneId');
  const zoneName = get('hostedZoneName');
  return {
    domainName,
    certificateArn,
    ...(hostedZoneId && zoneName ? { hostedZone: { hostedZoneId, zoneName } } : {}),
  };
}
