import { pipeline, type Readable, Transform } from 'node:stream';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj, type MiddyfiedHandler } from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { ENV, optionalEnv } from '../config';
import { streamedContentEncoding } from './content-encoding';
import { cors, parseAllowedOrigins } from './cors';
import { isServerFault, toErrorResponse } from './error-mapping';
import { logger } from './logger';
import { METRIC_NAMES } from './metric-names';
import { metrics } from './metrics';
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
        request.response.headers = { ...COMMON_HEADERS, ...request.response.headers };
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
      request.response = response;
    },
  };
}

/** Allowed origins, read once per function instance. */
const ALLOWED_ORIGINS = parseAllowedOrigins(optionalEnv(ENV.corsAllowedOrigins));

/**
 * Wraps an API handler body in the shared middy chain: logger context, metrics, then the HTTP concern.
 * `logEvent: false` wins over POWERTOOLS_LOGGER_LOG_EVENT: the event carries the caller's bearer key.
 */
export function createApiHandler(handler: ApiHandler) {
  return sharedChain(middy<APIGatewayProxyEvent, APIGatewayProxyResult>()).handler(handler);
}

/**
 * The middlewares every API function runs, in order, on a chain of either execution mode. httpApi shapes the
 * response's headers and Error bodies, which are the same objects whatever the body is (string or stream).
 */
function sharedChain<R>(chain: MiddyfiedHandler<APIGatewayProxyEvent, R>): MiddyfiedHandler<APIGatewayProxyEvent, R> {
  chain.use(injectLambdaContext(logger, { resetKeys: true, logEvent: false })).use(logMetrics(metrics));
  // Before httpApi, so that its after/onError run last and see the final response, Error bodies included.
  const corsMiddleware = cors(ALLOWED_ORIGINS);
  if (corsMiddleware) chain.use(corsMiddleware);
  return chain.use(httpApi() as MiddlewareObj<APIGatewayProxyEvent, R>);
}

/** What a streaming API handler body returns: the status and headers, and the body as a stream of its chunks. */
export interface StreamedApiResult {
  statusCode: number;
  headers?: Record<string, string>;
  body: Readable;
}

/** A streaming API handler body; failures before it returns get the usual Error bodies. */
export type StreamingApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<StreamedApiResult>;

/** Time left when a stream still running gives up, so that its failure is logged before Lambda stops the function. */
export const STREAM_DEADLINE_MARGIN_MS = 1000;

/**
 * Wraps a streaming handler body (Lambda response streaming, middy's streamify mode) in the shared chain plus content
 * negotiation (gzip in the function: API Gateway does not compress a streamed response). Until the body's first
 * byte everything is as in {@link createApiHandler}: status, headers, Error bodies. After it, a failure (a chunk
 * that cannot be produced, the function's deadline, a reader that went away) destroys the stream, so Lambda ends
 * the response with an error and the client never receives the end of the body; it is logged with the request id
 * and counted as `ResponseStreamAborted`.
 */
export function createStreamingApiHandler(handler: StreamingApiHandler) {
  const chain = middy<APIGatewayProxyEvent, StreamedApiResult>({
    executionMode: executionModeStreamifyResponse,
    // middy calls this once the body is written or has failed, before the invocation ends: a failure reported here
    // is logged and counted before Lambda may freeze the function (the chain's own log keys and metrics were
    // flushed when the handler returned).
    requestEnd: function reportAbortedStream(request) {
      const { event, context, response } = request as {
        event: APIGatewayProxyEvent;
        context: Context;
        response?: StreamedApiResult;
      };
      const body = response?.body;
      if (!body || typeof body === 'string' || (body.readableEnded && !body.errored)) return;
      const requestId = event.requestContext?.requestId ?? context.awsRequestId;
      const error = body.errored ?? new Error('the response stream closed before its end');
      logger.error('response stream aborted after its first byte', { requestId, error });
      metrics.addMetric(METRIC_NAMES.responseStreamAborted, 'Count', 1);
      metrics.publishStoredMetrics();
    },
  });
  return sharedChain(chain)
    .use(streamedContentEncoding())
    .handler(async function streamWithinDeadline(event, context) {
      const result = await handler(event, context);
      const guard = new Transform({
        transform(chunk, _encoding, done) {
          if (context.getRemainingTimeInMillis() < STREAM_DEADLINE_MARGIN_MS) {
            done(new Error('the function is about to time out'));
          } else {
            done(null, chunk);
          }
        },
      });
      // Errors travel down the chain to the response stream; requestEnd reports them.
      return { ...result, body: pipeline(result.body, guard, () => undefined) };
    });
}
