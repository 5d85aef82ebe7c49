import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, SERVICE_NAME, VERSION_DIMENSION } from '../../service/metric-names';
import { defaultDimensions, logger } from './logger';

/**
 * The one metrics emitter of a function instance (CloudWatch EMF, flushed after each invocation). Its own warnings
 * go through the structured logger, so every log line of a function stays JSON with the request id.
 */
export const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: SERVICE_NAME,
  defaultDimensions: defaultDimensions(),
  logger,
});

/**
 * Counts `name` once with the executing version as a dimension, in an EMF record of its own (a record's metrics share
 * their dimension sets, so the stage-wide count keeps its own); nothing where no version is set (locally).
 */
export function countForThisVersion(name: string): void {
  const version = process.env.AWS_LAMBDA_FUNCTION_VERSION;
  if (version) metrics.singleMetric().addDimension(VERSION_DIMENSION, version).addMetric(name, 'Count', 1);
}
