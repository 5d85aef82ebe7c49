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
import { isServerFault, toErrorResponse } from './error-mapping';

/** What an API handler body receives and returns; the shared chain does the rest. */
export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The HTTP concern of every API function: correlation keys in the log, the common headers on every response, and
 * every thrown error turned into the spec's Error body, logged with its detail and the request id.
 */
export function httpApi(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
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
      if (isServerFault(response)) {
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

/**
 * The error as the client's answer when it is a refusal (a 4xx Error body), logged and counted as every API function
 * counts one; undefined for a server fault, which the caller rethrows to the chain.
 */
export function refusalOf(error: unknown, requestId: string): APIGatewayProxyResult | undefined {
  const response = toErrorResponse(error, requestId);
  if (isServerFault(response)) return undefined;
  noteRefusal(response, error);
  return response;
}

function noteRefusal(response: APIGatewayProxyResult, error: unknown): void {
  logger.info('request refused', { status: response.statusCode, reason: (error as Error | undefined)?.message });
  metrics.addMetric(METRIC_NAMES.clientError, 'Count', 1);
}

/** Allowed origins, read once per function instance. */
const ALLOWED_ORIGINS = parseAllowedOrigins(optionalEnv(ENV.corsAllowedOrigins));

/**
 * How long before its Lambda time-out middy stops an API handler (@middy/core `timeoutEarlyInMillis`, 5 ms by
 * default) with a TimeoutError, answered as storage trouble (503). Lambda stops the function at its time-out ("Configure
 * Lambda function timeout", https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html), so the whole
 * error path (the error logged with its stack, metrics flushed, the trace closed) must fit in this margin: with 5 ms
 * it may not, and the invocation then ends as a time-out, a Lambda error that pages and rolls a canary back, its own
 * answer, log line and metric lost. 500 ms is 5 % of a buffered function's 10 s.
 */
export const EARLY_TIMEOUT_MS = 500;

/** Wraps an API handler body in the shared middy chain: tracer, logger context, metrics, then the HTTP concern. */
export function createApiHandler(handler: ApiHandler) {
  return sharedChain(
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: EARLY_TIMEOUT_MS }),
  ).handler(handler);
}

/**
 * The middlewares every API function runs, in order, on a chain of either execution mode: the Powertools chain of
 * every function (functions/observability/chain.ts), CORS, then httpApi. httpApi shapes the
 * response's headers and Error bodies, which are the same objects whatever the body is (string or stream).
 */
export function sharedChain<R>(
  chain: MiddyfiedHandler<APIGatewayProxyEvent, R>,
): MiddyfiedHandler<APIGatewayProxyEvent, R> {
  observed(chain);
  // Before httpApi, so that its after/onError run last and see the final response, Error bodies included.
  const corsMiddleware = cors(ALLOWED_ORIGINS);
  if (corsMiddleware) chain.use(corsMiddleware);
  return chain.use(httpApi() as MiddlewareObj<APIGatewayProxyEvent, R>);
}
