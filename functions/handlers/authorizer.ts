import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { authorize, UnauthorizedError } from '../api-keys/authorize';
import type { ApiKeyRepository } from '../api-keys/repository';
import { once, requireEnv } from '../config';
import { logger } from '../http/logger';
import { ApiKeyTable } from '../store/dynamo-api-key-repository';
import { createLeanDynamoClient } from '../store/lean-dynamodb';

/** Dependencies of the bearer-token authorizer. */
export interface AuthorizerDeps {
  keys: ApiKeyRepository;
}

/**
 * The TOKEN Lambda authorizer. It throws exactly `Unauthorized` for a bad key (API Gateway: 401) and anything else
 * for a failure to decide (API Gateway: AUTHORIZER_CONFIGURATION_ERROR, which the stack maps to 503). The token is
 * never logged.
 */
export function createHandler(deps: AuthorizerDeps | (() => AuthorizerDeps)) {
  const resolve = typeof deps === 'function' ? deps : () => deps;
  return middy<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult>()
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .handler(async function authorizeBearerToken(event) {
      try {
        const result = await authorize(resolve().keys, event.authorizationToken, event.methodArn);
        logger.info('key accepted', { keyId: result.principalId });
        return result;
      } catch (error) {
        if (error instanceof UnauthorizedError) {
          logger.info('key refused');
          throw new Error('Unauthorized');
        }
        logger.error('authorization failed', { error: error as Error });
        throw new Error('AuthorizerFailure');
      }
    });
}

export const handler = createHandler(
  once(() => ({
    keys: new ApiKeyTable({ client: createLeanDynamoClient(), tableName: requireEnv('API_KEYS_TABLE_NAME') }),
  })),
);
