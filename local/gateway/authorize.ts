import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { BEARER_VALIDATION_REGEX } from '../../functions/api-keys/key';
import { policyAllows } from '../../functions/api-keys/policy';
import type { GatewayResponseType } from '../../service/gateway-responses';
import { AUTHORIZER_HANDLER } from '../../service/routes';
import { tokenAuthorizerEvent } from '../lambda/events';
import { type Functions, invokeFunction, TIMED_OUT } from './invoke';

/** The stage's authorizer: its answer to a request, an authorizer result or the gateway response to send. */
export type Authorize = (
  authorization: string | undefined,
  methodArn: string,
) => Promise<APIGatewayAuthorizerResult | GatewayResponseType>;

export interface AuthorizerSettings extends Functions {
  /** Milliseconds a decision is reused for the same token; 0 turns the cache off. */
  ttlMs: number;
  now: () => number;
}

/** The stage's TOKEN authorizer: the validation expression, then the function, its decision cached per token and
 * its policy evaluated against the method ARN ("Use API Gateway Lambda authorizers"). */
export function createAuthorizer(settings: AuthorizerSettings): { authorize: Authorize; clear(): void } {
  const cache = new Map<string, { result: APIGatewayAuthorizerResult; expiresAt: number }>();
  const validation = new RegExp(BEARER_VALIDATION_REGEX);
  const decide = async (authorization: string, methodArn: string) => {
    const cached = cache.get(authorization);
    if (cached && cached.expiresAt > settings.now()) return cached.result;
    cache.delete(authorization);
    const result = await runAuthorizer(tokenAuthorizerEvent(authorization, methodArn), settings);
    if (typeof result !== 'string' && settings.ttlMs > 0) {
      cache.set(authorization, { result, expiresAt: settings.now() + settings.ttlMs });
    }
    return result;
  };
  const authorize: Authorize = async (authorization, methodArn) => {
    if (authorization === undefined || !validation.test(authorization)) return 'UNAUTHORIZED';
    const result = await decide(authorization, methodArn);
    if (typeof result === 'string') return result;
    return policyAllows(result, methodArn) ? result : 'ACCESS_DENIED';
  };
  return { authorize, clear: () => cache.clear() };
}

// `Unauthorized` thrown is a 401; any other error or a time-out is the stage's AUTHORIZER_CONFIGURATION_ERROR.
async function runAuthorizer(
  event: APIGatewayTokenAuthorizerEvent,
  functions: Functions,
): Promise<APIGatewayAuthorizerResult | GatewayResponseType> {
  try {
    const result = await invokeFunction(functions, AUTHORIZER_HANDLER, 'authorizer', event);
    return result === TIMED_OUT ? 'AUTHORIZER_CONFIGURATION_ERROR' : (result as APIGatewayAuthorizerResult);
  } catch (error) {
    return error instanceof Error && error.message === 'Unauthorized'
      ? 'UNAUTHORIZED'
      : 'AUTHORIZER_CONFIGURATION_ERROR';
  }
}
