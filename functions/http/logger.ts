import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, SERVICE_NAME, STAGE_DIMENSION, STAGE_ENV } from './metric-names';

/**
 * The dimensions every metric of this function instance carries besides `service`: the stage, when the stack set
 * one (absent locally), so the alarms of one stage never count another stage's metrics in the same account.
 */
export function defaultDimensions(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const stage = env[STAGE_ENV];
  return stage ? { [STAGE_DIMENSION]: stage } : {};
}

/** The one structured logger of a function instance (Powertools: built once at module scope). */
export const logger = new Logger({ serviceName: SERVICE_NAME, persistentKeys: defaultDimensions() });

/** The one metrics emitter of a function instance (CloudWatch EMF, flushed after each invocation). */
export const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: SERVICE_NAME,
  defaultDimensions: defaultDimensions(),
});
