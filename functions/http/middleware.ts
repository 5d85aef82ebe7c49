import middy, { type MiddlewareObj, type MiddyfiedHandler } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { COMMON_HEADERS } from '../../service/common-headers';
import { METRIC_NAMES } from '../../service/metric-names';
import { ENV, optionalEnv } from '../config';
import { observed } from '../observability/chain';
import { logger } from '../observability/logger';
import { metrics } from '../observability/metrics';
import { annotateTrace } from '../observability/tracer';
import { cors, parseAllowedOrigins } from './cors';
import { toErrorResponse } from './error-mapping';

/** What an API handler body receives and returns; the shared chain does the rest. */
export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** Correlation keys in the log, the common headers, and every thrown error as the Error body, logged and counted. */
function httpApi(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    name: 'httpApi',
    before: function appendCorrelationKeys({ event }) {
      const route = `${event.httpMethod} ${event.resource}`;
      logger.appendKeys({
        requestId: event.requestContext?.requestId,
        keyId: event.requestContext?.authorizer?.keyId,
        route,
      });
      annotateTrace({ route });
    },
    after: function addCommonHeaders(request) {
      if (request.response) {
        request.response.headers = { ...COMMON_HEADERS, ...request.response.headers };
        annotateTrace({ outcome: String(request.response.statusCode) });
      }
    },
    onError: function respondWithErrorBody(request) {
      const requestId = request.event.requestContext?.requestId ?? request.context.awsRequestId;
      const response = toErrorResponse(request.error, requestId);
      if (response.statusCode >= 500) {
        logger.error('request failed', { status: response.statusCode, error: request.error as Error });
        metrics.addMetric(
          response.statusCode === 503 ? METRIC_NAMES.storageUnavailable : METRIC_NAMES.internalError,
          'Count',
          1,
        );
      } else {
        noteRefusal(response, request.error);
      }
      annotateTrace({ outcome: String(response.statusCode) });
      request.response = response;
    },
  };
}

/** The error as a logged and counted 4xx answer; undefined for a server fault, which the caller rethrows. */
export function refusalOf(error: unknown, requestId: string): APIGatewayProxyResult | undefined {
  const response = toErrorResponse(error, requestId);
  if (response.statusCode >= 500) return undefined;
  noteRefusal(response, error);
  return response;
}

function noteRefusal(response: APIGatewayProxyResult, error: unknown): void {
  logger.info('request refused', { status: response.statusCode, reason: (error as Error | undefined)?.message });
  metrics.addMetric(METRIC_NAMES.clientError, 'Count', 1);
}

/**
 * How long before the Lambda time-out middy stops a handler with a TimeoutError (answered 503): the error path (log,
 * metrics flush, trace) must fit in it, or the invocation ends as a Lambda time-out and its answer is lost.
 */
export const EARLY_TIMEOUT_MS = 500;

/** Wraps an API handler body in the shared middy chain: tracer, logger context, metrics, then the HTTP concern. */
export function createApiHandler(handler: ApiHandler) {
  return sharedChain(
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: EARLY_TIMEOUT_MS }),
  ).handler(handler);
}

/** The middlewares every API function runs, buffered or streamed: the Powertools chain, CORS, then httpApi. */
export function sharedChain<R>(
  chain: MiddyfiedHandler<APIGatewayProxyEvent, R>,
): MiddyfiedHandler<APIGatewayProxyEvent, R> {
  observed(chain);
  // Before httpApi, so that its after/onError run last and see the final response, Error bodies included.
  const corsMiddleware = cors(parseAllowedOrigins(optionalEnv(ENV.corsAllowedOrigins)));
  if (corsMiddleware) chain.use(corsMiddleware);
  return chain.use(httpApi() as MiddlewareObj<APIGatewayProxyEvent, R>);
}
