import { CodeDeployClient } from '@aws-sdk/client-codedeploy';
import middy from '@middy/core';
import { ENV, optionalEnv, requireEnv } from '../config';
import {
  createProbeLambdaClient,
  type LifecycleHookEvent,
  type ProbeTarget,
  runPreTrafficCheck,
} from '../deploy/pre-traffic';
import { DEPLOY_CLIENT_BOUNDS, stackRollingBack } from '../deploy/stack-status';
import { observed } from '../observability/chain';
import { logger } from '../observability/logger';
import { ApiKeyTable } from '../store/api-key-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

// Bounded, so the verdict is reported within the margin the hook keeps past its check's deadline.
const codeDeploy = new CodeDeployClient(DEPLOY_CLIENT_BOUNDS);
const lambda = createProbeLambdaClient();
const targets = JSON.parse(requireEnv(ENV.preTrafficTargets)) as Record<string, ProbeTarget>;
const stackId = optionalEnv(ENV.stackId);
const rollingBack = stackId ? stackRollingBack(stackId) : undefined;
const keys = new ApiKeyTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.apiKeysTable) });

/**
 * CodeDeploy's BeforeAllowTraffic hook of every deployment group of the stage (see runPreTrafficCheck), behind the
 * Powertools chain like every function (it emits no metric).
 */
export const handler = observed(middy<LifecycleHookEvent, void>(), { metrics: false }).handler(
  async function preTrafficHook(event) {
    const verdict = await runPreTrafficCheck(event, {
      codeDeploy,
      lambda,
      targets,
      keys,
      ...(rollingBack ? { rollingBack } : {}),
    });
    const fields = { ...verdict, deploymentId: event.DeploymentId };
    if (verdict.waived) logger.warn('pre-traffic check failed while the stack rolls back', fields);
    else if (verdict.status === 'Failed') logger.error('pre-traffic check failed', fields);
    else logger.info('pre-traffic check passed', fields);
  },
);
