import middy from '@middy/core';
import type { ApiKeyRepository } from '../api-keys/repository';
import { type Deps, ENV, once, optionalEnv, requireEnv, resolveDeps } from '../config';
import { isRollingBack, NOT_FAILED_WHILE_ROLLING_BACK, stackRollingBack } from '../deploy/stack-status';
import { observed } from '../observability/chain';
import { logger } from '../observability/logger';
import { type AlarmDeliveryOptions, checkAlarmDelivery, snsSubscriptionLister } from '../self-check/alarm-delivery';
import { runSelfCheck, SelfCheckFailedError } from '../self-check/self-check';
import { ApiKeyTable } from '../store/api-key-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

export interface SelfCheckDeps {
  keys: ApiKeyRepository;
  /** The stage's public base URL, ending in `/v1`. */
  baseUrl: string;
  /** @default SELF_CHECK_SETTLE_MS */
  settleMs?: number;
  /** Whether the stage's alarms reach anyone (a deployed stage's alarm topic). @default not checked */
  alarmDelivery?: AlarmDeliveryOptions;
  /** Whether CloudFormation is rolling the stack back: a failed check then only warns. @default never */
  rollingBack?: () => Promise<boolean>;
}

/** The name of the alarm-delivery check in a report. */
export const ALARM_DELIVERY_CHECK = 'alarm delivery';

/** What a passing self-check returns to its caller (the deployment's trigger): the checks that ran. */
export interface SelfCheckReport {
  baseUrl: string;
  passed: string[];
  /** What passed but needs an operator (alarms that reach no one yet), also logged at WARN. */
  warnings: string[];
}

/**
 * The deploy self-check (the stage's CDK trigger): alarm delivery, then the smoke checks. A failure throws, failing
 * the deployment; during the rollback that follows it only warns.
 */
export function createHandler(deps: Deps<SelfCheckDeps>) {
  const resolve = resolveDeps(deps);
  return observed(middy<unknown, SelfCheckReport>(), { metrics: false }).handler(
    async function checkDeployedStage(_event, context) {
      const { keys, baseUrl, settleMs, ...resolved } = resolve();
      // Asked at most once per run: the stack's status does not change within one.
      const rollingBack = resolved.rollingBack ? once(resolved.rollingBack) : undefined;
      // First, at most ~35 s: the API checks then size their retries by the time that is left.
      const delivery = await checkDelivery(resolved.alarmDelivery, rollingBack);
      try {
        const results = await runSelfCheck({
          keys,
          baseUrl,
          // The request id ties a key row left behind (should its deletion ever fail) to this run's log.
          keyName: `self-check ${context.awsRequestId}`,
          remainingTimeMs: () => context.getRemainingTimeInMillis(),
          ...(settleMs === undefined ? {} : { settleMs }),
        });
        return {
          baseUrl,
          passed: [...delivery.passed, ...results.map(({ name }) => name)],
          warnings: delivery.warnings,
        };
      } catch (error) {
        // Asked only once a check has failed: a passing run never calls CloudFormation.
        if (!(error instanceof SelfCheckFailedError) || !(await isRollingBack(rollingBack))) throw error;
        const warning = `${error.message} ${NOT_FAILED_WHILE_ROLLING_BACK}`;
        logger.warn('self-check failed during a rollback', { warning });
        return { baseUrl, passed: delivery.passed, warnings: [...delivery.warnings, warning] };
      }
    },
  );
}

/** Checks and logs whether the stage's alarms reach anyone, when it has an alarm topic; the report's part of it. */
async function checkDelivery(
  options: AlarmDeliveryOptions | undefined,
  rollingBack: (() => Promise<boolean>) | undefined,
): Promise<Pick<SelfCheckReport, 'passed' | 'warnings'>> {
  if (!options) return { passed: [], warnings: [] };
  const delivery = await checkAlarmDelivery({ ...(rollingBack ? { rollingBack } : {}), ...options });
  logger.info('alarm delivery checked', { confirmed: delivery.confirmed, pending: delivery.pending });
  if (delivery.warning) logger.warn('alarm delivery', { warning: delivery.warning });
  return { passed: [ALARM_DELIVERY_CHECK], warnings: delivery.warning ? [delivery.warning] : [] };
}

/** The self-check's dependencies on a deployed stage, from the environment its construct sets. */
export function selfCheckDepsFromEnvironment(): SelfCheckDeps {
  const topicArn = optionalEnv(ENV.alarmTopicArn);
  const stackId = optionalEnv(ENV.stackId);
  const rollingBack = stackId ? stackRollingBack(stackId) : undefined;
  return {
    ...(rollingBack ? { rollingBack } : {}),
    keys: new ApiKeyTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.apiKeysTable) }),
    baseUrl: requireEnv(ENV.selfCheckBaseUrl),
    ...(topicArn
      ? {
          alarmDelivery: {
            topicArn,
            onCallTopic: optionalEnv(ENV.alarmOnCallTopic) === 'true',
            required: optionalEnv(ENV.alarmDeliveryRequired) === 'true',
            listSubscriptions: snsSubscriptionLister(),
          },
        }
      : {}),
  };
}

export const handler = createHandler(once(selfCheckDepsFromEnvironment));
