import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { authorize, UnauthorizedError } from '../api-keys/authorize';
import type { ApiKeyRepository } from '../api-keys/repository';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import { observed } from '../observability/chain';
import { logger } from '../observability/logger';
import { countForThisVersion, metrics } from '../observability/metrics';
import { annotateTrace } from '../observability/tracer';
import { ApiKeyTable } from '../store/api-key-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/**
 * The TOKEN authorizer (the token is never logged): `Unauthorized` for a bad key (401), anything else when it cannot
 * decide (503); each outcome is counted, since Lambda's `Errors` cannot tell a refusal from an outage.
 */
export function createHandler(deps: Deps<{ keys: ApiKeyRepository }>) {
  const resolve = resolveDeps(deps);
  return observed(middy<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult>()).handler(
    async function authorizeBearerToken(event) {
      try {
        const result = await authorize(resolve().keys, event.authorizationToken, event.methodArn);
        logger.info('key accepted', { keyId: result.principalId });
        metrics.addMetric(METRIC_NAMES.apiKeyAccepted, 'Count', 1);
        annotateTrace({ route: 'authorizer', outcome: 'accepted' });
        return result;
      } catch (error) {
        if (error instanceof UnauthorizedError) {
          logger.info('key refused');
          metrics.addMetric(METRIC_NAMES.apiKeyRefused, 'Count', 1);
          annotateTrace({ route: 'authorizer', outcome: 'refused' });
          throw new Error('Unauthorized');
        }
        logger.error('authorization failed', { error: error as Error });
        metrics.addMetric(METRIC_NAMES.authorizerUnavailable, 'Count', 1);
        // The deploy's gate of this version reads this one (infra/constructs/rollout.ts).
        countForThisVersion(METRIC_NAMES.authorizerUnavailable);
        annotateTrace({ route: 'authorizer', outcome: 'unavailable' });
        throw new Error('AuthorizerFailure');
      }
    },
  );
}

export const handler = createHandler(
  once(() => ({
    keys: new ApiKeyTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.apiKeysTable) }),
  })),
);
