import middy from '@middy/core';
import type { ApiKeyRepository } from '../api-keys/repository';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import { observed } from '../observability/chain';
import { runSelfCheck } from '../self-check/self-check';
import { ApiKeyTable } from '../store/api-key-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/** Dependencies of the deploy self-check. */
export interface SelfCheckDeps {
  keys: ApiKeyRepository;
  /** The stage's public base URL, ending in `/v1`. */
  baseUrl: string;
  /** @default SELF_CHECK_SETTLE_MS */
  settleMs?: number;
}

/** What a passing self-check returns to its caller (the deployment's trigger): the checks that ran. */
export interface SelfCheckReport {
  baseUrl: string;
  passed: string[];
}

/**
 * The deploy self-check, invoked by the stage's CDK trigger after each deployment: calls the stage through its
 * public URL with a key that lives only for the run (`functions/self-check/self-check.ts`). A failed check throws,
 * which fails the trigger and so the deployment, and CloudFormation rolls back. The key is never logged.
 */
export function createHandler(deps: Deps<SelfCheckDeps>) {
  const resolve = resolveDeps(deps);
  return observed(middy<unknown, SelfCheckReport>(), { metrics: false }).handler(
    async function checkDeployedStage(_event, context) {
      const { keys, baseUrl, settleMs } = resolve();
      const results = await runSelfCheck({
        keys,
        baseUrl,
        // The request id ties a key row left behind (should its deletion ever fail) to this run's log.
        keyName: `self-check ${context.awsRequestId}`,
        remainingTimeMs: () => context.getRemainingTimeInMillis(),
        ...(settleMs === undefined ? {} : { settleMs }),
      });
      return { baseUrl, passed: results.map(({ name }) => name) };
    },
  );
}

export const handler = createHandler(
  once(() => ({
    keys: new ApiKeyTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.apiKeysTable) }),
    baseUrl: requireEnv(ENV.selfCheckBaseUrl),
  })),
);
