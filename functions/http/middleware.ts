import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { corsHeaders, parseAllowedOrigins } from './cors';
import { isServerFault, toErrorResponse } from './error-mapping';
import { headerValue } from './json-body';
import { logger, metrics } from './logger';
import { METRIC_NAMES } from './metric-names';
import { COMMON_HEADERS } from './responses';

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
      logger.appendKeys({
        requestId: event.requestContext?.requestId,
        keyId: event.requestContext?.authorizer?.keyId,
        route: `${event.httpMethod} ${event.resource}`,
      });
    },
    after: function addCommonHeaders(request) {
      if (request.response) {
        request.response.headers = { ...COMMON_HEADERS, ...request.response.headers, ...corsFor(request.event) };
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
        logger.info('request refused', { status: response.statusCode, reason: request.error?.message });
        metrics.addMetric(METRIC_NAMES.clientError, 'Count', 1);
      }
      request.response = { ...response, headers: { ...response.headers, ...corsFor(request.event) } };
    },
  };
}

/** Allowed origins, read once per function instance. */
const ALLOWED_ORIGINS = parseAllowedOrigins(process.env.CORS_ALLOWED_ORIGINS);

function corsFor(event: APIGatewayProxyEvent): Record<string, string> {
  return corsHeaders(headerValue(event?.headers, 'origin'), ALLOWED_ORIGINS);
}

/**
 * Wraps an API handler body in the shared middy chain: logger context, metrics, then the HTTP concern.
 * `logEvent: false` wins over POWERTOOLS_LOGGER_LOG_EVENT: the event carries the caller's bearer key.
 */
export function createApiHandler(handler: ApiHandler) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(logMetrics(metrics))
    .use(httpApi())
    .handler(handler);
}
