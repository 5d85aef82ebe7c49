import { pipeline, type Readable, Transform } from 'node:stream';
import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { logger } from '../observability/logger';
import { metrics } from '../observability/metrics';
import { streamedContentEncoding } from './content-encoding';
import { EARLY_TIMEOUT_MS, sharedChain } from './middleware';
import type { StreamedApiResult } from './responses';

/*
 * The streaming variant of the API chain, in a module of its own so that the buffered functions' bundles carry
 * none of it (middy's streamify mode, node:stream, content negotiation).
 */

/** A streaming API handler body; failures before it returns get the usual Error bodies. */
export type StreamingApiHandler = (
  event: APIGatewayProxyEvent,
  context: Context,
) => Promise<StreamedApiResult<Readable>>;

/** Time left when a stream still running gives up, so that its failure is logged before Lambda stops the function. */
export const STREAM_DEADLINE_MARGIN_MS = 1000;

/**
 * Wraps a streaming handler body (Lambda response streaming, middy's streamify mode) in the shared chain plus content
 * negotiation (gzip in the function: API Gateway does not compress a streamed response). Until the body's first
 * byte everything is as in {@link createApiHandler}: status, headers, Error bodies. After it, a failure (a chunk
 * that cannot be produced, the function's deadline) destroys the stream, so Lambda ends the response with an error
 * and the client never receives the end of the body; it is logged with the request id and counted as
 * `ResponseStreamAborted`. A client that hangs up is not such a failure: Lambda does not interrupt a streamed
 * response when the client's connection breaks (Lambda Developer Guide, "Response streaming for Lambda functions"),
 * so the function runs to its end and cannot tell.
 */
export function createStreamingApiHandler(handler: StreamingApiHandler) {
  const chain = middy<APIGatewayProxyEvent, StreamedApiResult>({
    executionMode: executionModeStreamifyResponse,
    timeoutEarlyInMillis: EARLY_TIMEOUT_MS,
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
