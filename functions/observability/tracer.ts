import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from '../../service/metric-names';

/**
 * The one X-Ray tracer of a function instance. Powertools traces only inside Lambda (off locally and in tests unless
 * a test sets what Lambda sets); outgoing HTTP is not patched, since the DynamoDB client is captured on its own.
 */
export const tracer = new Tracer({ serviceName: SERVICE_NAME, captureHTTPsRequests: false });

/**
 * Annotates the invocation's handler subsegment (indexed in X-Ray): `route` is `METHOD /resource` or the function's
 * role, `outcome` the status or the function's verdict. Nothing when tracing is off.
 */
export function annotateTrace(annotations: { route?: string; outcome?: string }): void {
  if (annotations.route !== undefined) tracer.putAnnotation('route', annotations.route);
  if (annotations.outcome !== undefined) tracer.putAnnotation('outcome', annotations.outcome);
}
