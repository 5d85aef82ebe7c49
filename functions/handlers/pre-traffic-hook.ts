import { CodeDeployClient } from '@aws-sdk/client-codedeploy';
import { ENV, requireEnv } from '../config';
import {
  createProbeLambdaClient,
  type LifecycleHookEvent,
  type ProbeTarget,
  runPreTrafficCheck,
} from '../deploy/pre-traffic';
import { logger } from '../observability/logger';

const codeDeploy = new CodeDeployClient({});
const lambda = createProbeLambdaClient();
const targets = JSON.parse(requireEnv(ENV.preTrafficTargets)) as Record<string, ProbeTarget>;

/** CodeDeploy's BeforeAllowTraffic hook of every deployment group of the stage (see runPreTrafficCheck). */
export async function handler(event: LifecycleHookEvent): Promise<void> {
  const verdict = await runPreTrafficCheck(event, { codeDeploy, lambda, targets });
  if (verdict.status === 'Failed')
    logger.error('pre-traffic check failed', { ...verdict, deploymentId: event.DeploymentId });
  else logger.info('pre-traffic check passed', { ...verdict, deploymentId: event.DeploymentId });
}
