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
 * The resources a key's policy allows: API Gateway reuses it for every route, so a `write` key's covers the whole
 * stage and a `read` key's every GET route (`{param}` as `*`); whatever it does not cover is a 403.
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
 * Decides a TOKEN authorizer request by the key's SHA-256 hash: the table's lookup is the comparison, so the key is
 * never compared or stored in clear. @throws UnauthorizedError for a bad key, StorageUnavailableError for the table
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
