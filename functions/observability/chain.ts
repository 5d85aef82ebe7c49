import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddyfiedHandler } from '@middy/core';
import { logger } from './logger';
import { metrics } from './metrics';
import { tracer } from './tracer';

/**
 * The Powertools chain every function runs first, HTTP or not: the handler's X-Ray subsegment (its response is not
 * recorded: it can be a whole inventory or an authorizer policy), the logger's Lambda context, then metrics.
 * `logEvent: false` wins over POWERTOOLS_LOGGER_LOG_EVENT: API events and authorizer events carry the bearer key.
 * `metrics: false` for a function that emits none (Powertools warns on every empty flush).
 */
export function observed<E, R>(
  chain: MiddyfiedHandler<E, R>,
  options: { metrics?: boolean } = {},
): MiddyfiedHandler<E, R> {
  chain
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }));
  return options.metrics === false ? chain : chain.use(logMetrics(metrics));
}
