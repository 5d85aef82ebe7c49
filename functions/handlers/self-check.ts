import middy from '@middy/core';
import type { ApiKeyRepository } from '../api-keys/repository';
import { type Deps, ENV, once, optionalEnv, requireEnv, resolveDeps } from '../config';
import { stackRollingBack, waivedWhileRollingBack } from '../deploy/stack-status';
import { observed } from '../observability/chain';
import { logger } from '../observability/logger';
import { runSelfCheck, SelfCheckFailedError } from '../self-check/self-check';
import { ApiKeyTable } from '../store/api-key-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

export interface SelfCheckDeps {
  keys: ApiKeyRepository;
  /** The stage's public base URL, ending in `/v1`. */
  baseUrl: string;
  /** @default SELF_CHECK_SETTLE_MS */
  settleMs?: number;
  /** Whether CloudFormation is rolling the stack back: a failed check then only warns. @default never */
  rollingBack?: () => Promise<boolean>;
}

/** What a passing self-check returns to its caller (the deployment's trigger): the checks that ran. */
export interface SelfCheckReport {
  baseUrl: string;
  passed: string[];
  /** A failure waived because the stack rolls back, also logged at WARN. */
  warnings: string[];
}

/**
 * The deploy self-check (the stage's CDK trigger): the deploy checks through the API as clients reach it. A failure
 * throws, failing the deployment; during the rollback that follows it only warns.
 */
export function createHandler(deps: Deps<SelfCheckDeps>) {
  const resolve = resolveDeps(deps);
  return observed(middy<unknown, SelfCheckReport>(), { metrics: false }).handler(
    async function checkDeployedStage(_event, context) {
      const { keys, baseUrl, settleMs, rollingBack } = resolve();
      try {
        const results = await runSelfCheck({
          keys,
          baseUrl,
          // The request id ties a key row left behind (should its deletion ever fail) to this run's log.
          keyName: `self-check ${context.awsRequestId}`,
          remainingTimeMs: () => context.getRemainingTimeInMillis(),
          ...(settleMs === undefined ? {} : { settleMs }),
        });
        return { baseUrl, passed: results.map(({ name }) => name), warnings: [] };
      } catch (error) {
        const warning =
          error instanceof SelfCheckFailedError ? await waivedWhileRollingBack(error.message, rollingBack) : undefined;
        if (!warning) throw error;
        logger.warn('self-check failed during a rollback', { warning });
        return { baseUrl, passed: [], warnings: [warning] };
      }
    },
  );
}

/** The self-check's dependencies on a deployed stage, from the environment its construct sets. */
export function selfCheckDepsFromEnvironment(): SelfCheckDeps {
  const stackId = optionalEnv(ENV.stackId);
  return {
    ...(stackId ? { rollingBack: stackRollingBack(stackId) } : {}),
    keys: new ApiKeyTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.apiKeysTable) }),
    baseUrl: requireEnv(ENV.selfCheckBaseUrl),
  };
}

export const handler = createHandler(once(selfCheckDepsFromEnvironment));
