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

/** A streaming API handler body; failures before it returns get the usual Error bodies. */
export type StreamingApiHandler = (
  event: APIGatewayProxyEvent,
  context: Context,
) => Promise<StreamedApiResult<Readable>>;

/** Time left when a stream still running gives up, so that its failure is logged before Lambda stops the function. */
const STREAM_DEADLINE_MARGIN_MS = 1000;

/**
 * The shared chain plus content negotiation around a streaming body: before the first byte a failure is an Error body;
 * after it, it destroys the stream and is logged and counted as `ResponseStreamAborted`.
 */
export function createStreamingApiHandler(handler: StreamingApiHandler) {
  const chain = middy<APIGatewayProxyEvent, StreamedApiResult>({
    executionMode: executionModeStreamifyResponse,
    timeoutEarlyInMillis: EARLY_TIMEOUT_MS,
    // Called once the body is written or has failed, before Lambda may freeze the function.
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
