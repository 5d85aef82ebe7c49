import { Metrics } from '@aws-lambda-powertools/metrics';
import { defaultDimensions, METRICS_NAMESPACE, SERVICE_NAME } from './metric-names';

/** The one metrics emitter of a function instance (CloudWatch EMF, flushed after each invocation). */
export const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: SERVICE_NAME,
  defaultDimensions: defaultDimensions(),
});
