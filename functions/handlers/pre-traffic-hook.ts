import { CodeDeployClient } from '@aws-sdk/client-codedeploy';
import middy from '@middy/core';
import { ENV, requireEnv } from '../config';
import {
  createProbeLambdaClient,
  type LifecycleHookEvent,
  type ProbeTarget,
  runPreTrafficCheck,
} from '../deploy/pre-traffic';
import { observed } from '../observability/chain';
import { logger } from '../observability/logger';

const codeDeploy = new CodeDeployClient({});
const lambda = createProbeLambdaClient();
const targets = JSON.parse(requireEnv(ENV.preTrafficTargets)) as Record<string, ProbeTarget>;

/**
 * CodeDeploy's BeforeAllowTraffic hook of every deployment group of the stage (see runPreTrafficCheck), behind the
 * Powertools chain like every function (it emits no metric).
 */
export const handler = observed(middy<LifecycleHookEvent, void>(), { metrics: false }).handler(
  async function preTrafficHook(event) {
    const verdict = await runPreTrafficCheck(event, { codeDeploy, lambda, targets });
    if (verdict.status === 'Failed')
      logger.error('pre-traffic check failed', { ...verdict, deploymentId: event.DeploymentId });
    else logger.info('pre-traffic check passed', { ...verdict, deploymentId: event.DeploymentId });
  },
);
