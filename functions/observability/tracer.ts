import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from '../../service/metric-names';

/**
 * The one X-Ray tracer of a function instance (Powertools). Powertools traces only inside Lambda (it needs
 * `AWS_EXECUTION_ENV`, and the X-Ray SDK the `_X_AMZN_TRACE_ID` Lambda sets per invocation), and
 * `POWERTOOLS_TRACE_ENABLED=false` turns it off there: locally and in tests it is off unless a test sets what
 * Lambda sets (local/lambda/tracing.ts). Outgoing HTTP is not patched: the calls worth a subsegment are DynamoDB's,
 * captured on the client (functions/store/dynamo-client.ts).
 */
export const tracer = new Tracer({ serviceName: SERVICE_NAME, captureHTTPsRequests: false });

/** The annotations (indexed, searchable in X-Ray) every traced invocation carries. */
export const TRACE_ANNOTATIONS = {
  /** `METHOD /resource` for an API function, the function's role otherwise (`authorizer`, `inventory stream`). */
  route: 'route',
  /** How the invocation ended: an HTTP status class or the function's own verdict (`accepted`, `refused`, ...). */
  outcome: 'outcome',
} as const;

/** Annotates the invocation's handler subsegment; nothing when tracing is off. */
export function annotateTrace(annotations: { route?: string; outcome?: string }): void {
  if (annotations.route !== undefined) tracer.putAnnotation(TRACE_ANNOTATIONS.route, annotations.route);
  if (annotations.outcome !== undefined) tracer.putAnnotation(TRACE_ANNOTATIONS.outcome, annotations.outcome);
}
