import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { ROUTES } from '../../service/routes';
import type { ApiKeyScope } from './key';
import { hashApiKey, isWellFormedApiKey, parseBearerToken } from './key';
import type { ApiKeyRepository } from './repository';

/** Thrown for a missing, malformed, unknown or revoked key; API Gateway answers 401 for exactly this message. */
export class UnauthorizedError extends Error {
  override readonly name = 'UnauthorizedError';
  constructor() {
    super('Unauthorized');
  }
}

/** A method ARN up to its stage: `arn:<partition>:execute-api:<region>:<account>:<api>/<stage>`. */
const STAGE_ARN = /^(arn:[^:]+:execute-api:[^:]+:[^:]+:[^/]+\/[^/]+)(?:\/|$)/;

/**
 * The resources the policy of a key of `scope` allows. A `write` key's covers every method and path of the stage:
 * API Gateway caches the policy per token and reuses it for every route, so a policy scoped to the called method
 * would turn the next route into a 403. A `read` key's lists each read (GET) route, a `{param}` segment as `*`,
 * cached per key as well, and every call it does not cover is API Gateway's 403.
 */
export function allowedResources(scope: ApiKeyScope, methodArn: string): string | string[] {
  const stage = STAGE_ARN.exec(methodArn)?.[1];
  if (stage === undefined) throw new Error('methodArn is not an execute-api ARN');
  if (scope === 'write') return `${stage}/*/*`;
  return ROUTES.filter((route) => route.method === 'GET').map(
    (route) => `${stage}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}`,
  );
}

/**
 * Decides a TOKEN authorizer request: the key is looked up by its SHA-256 hash, never compared or stored in clear.
 * The table's key lookup is the comparison: a row found by the hash has that hash, so nothing is compared here.
 *
 * @throws UnauthorizedError for a missing, malformed, unknown or revoked key.
 * @throws StorageUnavailableError when the keys table cannot be read (API Gateway then answers
 *   AUTHORIZER_CONFIGURATION_ERROR, 503).
 */
export async function authorize(
  keys: ApiKeyRepository,
  authorizationHeader: string | undefined,
  methodArn: string,
): Promise<APIGatewayAuthorizerResult> {
  const token = parseBearerToken(authorizationHeader);
  if (token === undefined || !isWellFormedApiKey(token)) throw new UnauthorizedError();
  const keyHash = hashApiKey(token);
  const record = await keys.findByHash(keyHash);
  if (!record || record.revokedAt) throw new UnauthorizedError();
  return {
    principalId: record.keyId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [
        { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: allowedResources(record.scope, methodArn) },
      ],
    },
    context: { keyId: record.keyId, keyName: record.name, scope: record.scope },
  };
}
