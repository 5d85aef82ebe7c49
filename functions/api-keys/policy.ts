import type { APIGatewayAuthorizerResult } from 'aws-lambda';

/** Matches an IAM resource pattern (`*` any run of characters, `?` one character) against an ARN. */
function arnMatches(pattern: string, arn: string): boolean {
  let regex = '^';
  for (const ch of pattern) regex += ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`${regex}$`).test(arn);
}

/** Evaluates an authorizer policy for one method ARN as API Gateway does: an explicit Deny wins, then an Allow. */
export function policyAllows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  let allowed = false;
  for (const statement of result.policyDocument.Statement) {
    const s = statement as { Effect: string; Action?: string | string[]; Resource?: string | string[] };
    const actions = ([] as string[]).concat(s.Action ?? []);
    if (!actions.some((action) => arnMatches(action, 'execute-api:Invoke'))) continue;
    const resources = ([] as string[]).concat(s.Resource ?? []);
    if (!resources.some((resource) => arnMatches(resource, methodArn))) continue;
    if (s.Effect === 'Deny') return false;
    if (s.Effect === 'Allow') allowed = true;
  }
  return allowed;
}
