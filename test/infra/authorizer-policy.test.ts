import { authorize } from '../../functions/api-keys/authorize';
import { generateApiKey } from '../../functions/api-keys/key';
import { policyAllows } from '../../functions/api-keys/policy';
import { InMemoryApiKeyRepository } from '../fixtures/builders';
import { evaluate, type PolicyDocument } from './policy-evaluation';

/**
 * The authorizer's policy as AWS evaluates it, not as our local gateway reads it: API Gateway evaluates the returned
 * policy for `execute-api:Invoke` on the method ARN and answers ACCESS_DENIED (403) when it does not allow it
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-output.html). Each
 * decision is asked of an IAM policy evaluator, and functions/api-keys/policy.ts must agree with it.
 */
const ACCOUNT = '123456789012';
const arn = (method: string, path: string, api = 'abc123') =>
  `arn:aws:execute-api:eu-west-1:${ACCOUNT}:${api}/v1/${method}${path}`;

const CASES: readonly [method: string, path: string, api?: string][] = [
  ['GET', '/inventory'],
  ['GET', '/inventory/1'],
  ['GET', '/inventory/9223372036854775807'],
  ['GET', '/inventory/9223372036854775807/history'],
  ['GET', '/pets/1'],
  ['GET', '/store/orders'],
  ['PATCH', '/inventory/1'],
  ['PATCH', '/inventory'],
  ['PATCH', '/inventory/1/history'],
  ['DELETE', '/inventory/1'],
  ['GET', '/inventory', 'other'],
];

async function policyFor(scope: 'read' | 'write') {
  const keys = new InMemoryApiKeyRepository();
  const { key, record } = generateApiKey('display', new Date(), scope);
  await keys.create(record);
  // Asked on a PATCH first: the first call of a key decides the policy cached for every route.
  return authorize(keys, `Bearer ${key}`, arn('PATCH', '/inventory/1'));
}

/** The calls of {@link CASES} on the key's own API that read. */
const READS = [
  'GET /inventory',
  'GET /inventory/1',
  'GET /inventory/9223372036854775807',
  'GET /inventory/9223372036854775807/history',
  'GET /pets/1',
  'GET /store/orders',
];

describe('Authorizer policy → API Gateway, evaluated', () => {
  it.each([
    ['read', READS],
    [
      'write',
      [...READS, 'PATCH /inventory/1', 'PATCH /inventory', 'PATCH /inventory/1/history', 'DELETE /inventory/1'],
    ],
  ] as const)('allows a %s key exactly %j on its own API, and the local gateway agrees', async (scope, allowed) => {
    // Prepare
    const result = await policyFor(scope);
    // Act
    const decisions = [];
    for (const [method, path, api] of CASES) {
      const resource = arn(method, path, api);
      const evaluated = await evaluate({
        principal: `arn:aws:iam::${ACCOUNT}:user/caller`,
        action: 'execute-api:Invoke',
        resource,
        resourceAccount: ACCOUNT,
        identityPolicies: [{ name: 'authorizer', policy: result.policyDocument as unknown as PolicyDocument }],
      });
      decisions.push({
        call: `${method} ${path}${api ? ` (${api})` : ''}`,
        evaluated,
        local: policyAllows(result, resource),
      });
    }
    // Assess
    expect(decisions.filter((d) => d.evaluated === 'Allowed').map((d) => d.call)).toEqual(allowed);
    for (const decision of decisions) expect(decision.local).toBe(decision.evaluated === 'Allowed');
  });
});
