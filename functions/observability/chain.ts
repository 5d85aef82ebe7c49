import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddyfiedHandler } from '@middy/core';
import { logger } from './logger';
import { metrics } from './metrics';
import { tracer } from './tracer';

/**
 * The Powertools chain every function runs first: tracer (no response recorded), logger, metrics (`false` for a
 * function that emits none). Events are never logged: they carry the bearer key.
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
