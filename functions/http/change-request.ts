import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { ENV, once, requireEnv } from '../config';
import { ConcurrentChangeError } from '../inventory/errors';
import type { ChangeOrigin } from '../inventory/types';
import { logger } from '../observability/logger';
import { metrics } from '../observability/metrics';
import { idempotencyTable } from '../store/idempotency-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';
import { createIdempotentRunner, type IdempotentRunner, idempotentChangeId } from './idempotency';
import { refusalOf } from './middleware';

/** What a write request runs with: its runner of Idempotency-Keys, its key (if sent) and the request as understood. */
export interface ChangeRequest {
  idempotent: IdempotentRunner;
  idempotencyKey: string | undefined;
  /** The request as the operation parsed it (petId and body): a repeat under the key must ask the same. */
  request: Record<string, unknown>;
}

/**
 * Runs a write (a PATCH, a batch) signed with the caller's origin: once per Idempotency-Key when one was sent, its
 * refusals (404, 409) kept as the first answer a retry gets back, server faults and concurrent-change 409s not kept.
 */
export function runChange(
  event: APIGatewayProxyEvent,
  context: Context,
  { idempotent, idempotencyKey, request }: ChangeRequest,
  apply: (origin: ChangeOrigin) => Promise<APIGatewayProxyResult>,
): Promise<APIGatewayProxyResult> {
  const origin = apiChangeOrigin(event);
  if (idempotencyKey === undefined) return apply(origin);
  const requestId = event.requestContext?.requestId ?? context.awsRequestId;
  const idempotentRequest = { keyId: origin.actor, idempotencyKey, request };
  return idempotent(idempotentRequest, context, async () => {
    try {
      // Named after the key, so a repeat whose first answer could not be kept finds its change on the entry.
      return await apply({ ...origin, changeId: idempotentChangeId(idempotentRequest) });
    } catch (error) {
      // A resend of a transaction another request crossed must run again, not get this 409 back.
      if (error instanceof ConcurrentChangeError) throw error;
      const refusal = refusalOf(error, requestId);
      if (refusal === undefined) throw error;
      return refusal;
    }
  });
}

/** Who and why for the history: the caller's key id (set by the authorizer) and the API Gateway request id. */
function apiChangeOrigin(event: APIGatewayProxyEvent): ChangeOrigin {
  const { authorizer, requestId } = event.requestContext;
  const keyId = authorizer?.keyId ?? authorizer?.principalId;
  return {
    source: 'api',
    actor: typeof keyId === 'string' && keyId.length > 0 ? keyId : 'unknown',
    ...(requestId ? { requestId } : {}),
    at: new Date().toISOString(),
  };
}

/**
 * The Lambda's idempotent runner for `operation` (which names its stored keys), built on the first request with an
 * Idempotency-Key: a request without one needs no idempotency table.
 */
export function lambdaIdempotentRunner(operation: string): IdempotentRunner {
  const runner = once(() =>
    createIdempotentRunner({
      persistenceStore: idempotencyTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.idempotencyTable) }),
      operation,
      onAnswerNotKept: (error) => logger.error('idempotent answer not kept', { error }),
      onReplay: () => metrics.addMetric(METRIC_NAMES.idempotentReplayed, 'Count', 1),
    }),
  );
  return (request, context, run) => runner()(request, context, run);
}
