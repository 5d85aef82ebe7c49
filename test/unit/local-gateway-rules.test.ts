import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { matchPath } from '../../infra/local/gateway';
import { arnMatches, policyAllows } from '../../infra/local/policy';

function policy(...statements: { Effect: 'Allow' | 'Deny'; Resource: string }[]): APIGatewayAuthorizerResult {
  return {
    principalId: 'p',
    policyDocument: {
      Version: '2012-10-17',
      Statement: statements.map((s) => ({ Action: 'execute-api:Invoke', ...s })),
    },
  };
}

const ARN = 'arn:aws:execute-api:us-east-1:1:local/v1/PATCH/inventory/7';

describe('Local gateway: policy evaluation', () => {
  it('matches IAM wildcards', () => {
    expect(arnMatches('arn:aws:execute-api:us-east-1:1:local/v1/*/*', ARN)).toBe(true);
    expect(arnMatches('arn:aws:execute-api:us-east-1:1:local/v1/GET/*', ARN)).toBe(false);
    expect(arnMatches('arn:aws:execute-api:us-east-1:1:local/v?/PATCH/inventory/7', ARN)).toBe(true);
  });

  it('allows only what an Allow statement covers, and an explicit Deny wins', () => {
    expect(
      policyAllows(policy({ Effect: 'Allow', Resource: 'arn:aws:execute-api:us-east-1:1:local/v1/*/*' }), ARN),
    ).toBe(true);
    expect(
      policyAllows(
        policy({ Effect: 'Allow', Resource: 'arn:aws:execute-api:us-east-1:1:local/v1/GET/inventory' }),
        ARN,
      ),
    ).toBe(false);
    expect(
      policyAllows(
        policy(
          { Effect: 'Allow', Resource: 'arn:aws:execute-api:us-east-1:1:local/v1/*/*' },
          { Effect: 'Deny', Resource: 'arn:aws:execute-api:us-east-1:1:local/v1/PATCH/*' },
        ),
        ARN,
      ),
    ).toBe(false);
    expect(policyAllows(policy(), ARN)).toBe(false);
  });
});

describe('Local gateway: path matching', () => {
  it('matches literal and parameter segments and decodes parameters', () => {
    expect(matchPath('/inventory', ['inventory'])).toEqual({});
    expect(matchPath('/inventory/{petId}', ['inventory', '42'])).toEqual({ petId: '42' });
    expect(matchPath('/inventory/{petId}', ['inventory', '1%2F2'])).toEqual({ petId: '1/2' });
  });

  it('does not match other shapes, empty parameters or extra segments', () => {
    expect(matchPath('/inventory/{petId}', ['inventory', ''])).toBeUndefined();
    expect(matchPath('/inventory/{petId}', ['inventory'])).toBeUndefined();
    expect(matchPath('/inventory', ['inventory', ''])).toBeUndefined();
    expect(matchPath('/inventory', ['pets'])).toBeUndefined();
  });
});
