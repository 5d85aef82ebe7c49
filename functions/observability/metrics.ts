import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../service/metric-names';
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
