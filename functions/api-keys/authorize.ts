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

/**
 * The resource a policy must cover: every method and path of the stage. API Gateway caches the policy per token
 * and reuses it for every route, so a policy scoped to the called method would turn the next route into a 403.
 */
export function stageWideResource(methodArn: string): string {
  const [arnPrefix, apiPath] = splitOnce(methodArn, ':execute-api:');
  const parts = apiPath.split('/');
  const [regionAccountApi, stage] = [parts[0], parts[1]];
  if (!arnPrefix || !regionAccountApi || !stage) throw new Error('methodArn is not an execute-api ARN');
  return `${arnPrefix}:execute-api:${regionAccountApi}/${stage}/*/*`;
}

/**
 * The resources a `read` key's policy allows: each read (GET) route of the stage, a `{param}` segment as `*`. It is
 * cached per key like a write key's stage-wide policy, and every call it does not cover is API Gateway's 403.
 */
export function readRouteResources(methodArn: string): string[] {
  const stageWide = stageWideResource(methodArn);
  const stageBase = stageWide.slice(0, -'/*/*'.length);
  return ROUTES.filter((route) => route.method === 'GET').map(
    (route) => `${stageBase}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}`,
  );
}

/** The resources the policy of a key of `scope` allows. */
export function allowedResources(scope: ApiKeyScope, methodArn: string): string | string[] {
  return scope === 'read' ? readRouteResources(methodArn) : stageWideResource(methodArn);
}

function splitOnce(value: string, separator: string): [string, string] {
  const index = value.indexOf(separator);
  return index < 0 ? ['', ''] : [value.slice(0, index), value.slice(index + separator.length)];
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
