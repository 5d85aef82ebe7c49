import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { matchPath, routeRequest } from '../../local/gateway';
import { arnMatches, policyAllows } from '../../local/policy';
import { createThrottle, throttlingFromEnv } from '../../local/throttle';
import { corsPreflightHeaders } from '../../service/gateway-responses';
import type { Route } from '../../service/routes';

function policy(...statements: { Effect: 'Allow' | 'Deny'; Resource: string }[]): APIGatewayAuthorizerResult {
  return {
    principalId: 'p',
    policyDocument: {
      Version: '2012-10-17',
      Statement: statements.map((s) => ({ Action: 'execute-api:Invoke', ...s })),
    },
  };
}

const API = 'arn:aws:execute-api:us-east-1:1:local';
const ARN = `${API}/v1/PATCH/inventory/7`;
/** A statement of `effect` over `resource`, written after the API's ARN. */
const statement = (effect: 'Allow' | 'Deny', resource: string) => ({ Effect: effect, Resource: `${API}/${resource}` });

describe('Local gateway: policy evaluation', () => {
  it('matches IAM wildcards', () => {
    expect(arnMatches(`${API}/v1/*/*`, ARN)).toBe(true);
    expect(arnMatches(`${API}/v1/GET/*`, ARN)).toBe(false);
    expect(arnMatches(`${API}/v?/PATCH/inventory/7`, ARN)).toBe(true);
  });

  it('allows only what an Allow statement covers, and an explicit Deny wins', () => {
    expect(policyAllows(policy(statement('Allow', 'v1/*/*')), ARN)).toBe(true);
    expect(policyAllows(policy(statement('Allow', 'v1/GET/inventory')), ARN)).toBe(false);
    expect(policyAllows(policy(statement('Allow', 'v1/*/*'), statement('Deny', 'v1/PATCH/*')), ARN)).toBe(false);
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

/**
 * "Set up a proxy integration with a proxy resource"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-set-up-simple-proxy.html): a static
 * resource beside a path parameter is allowed and a request that matches both goes to the static one.
 */
describe('Local gateway: routing by service/routes.ts', () => {
  const route = (method: string, path: string) => ({ method, path, operationId: path, handler: path, access: [] });
  const ROUTES_WITH_A_STATIC_SIBLING = [
    route('GET', '/inventory/{petId}'),
    route('PATCH', '/inventory/{petId}'),
    route('POST', '/inventory/changes'),
    route('GET', '/inventory/{petId}/history'),
  ] as unknown as Route[];
  const resolve = (method: string, path: string) => routeRequest(method, path, false, ROUTES_WITH_A_STATIC_SIBLING);

  it('sends a path that matches a static segment and a {petId} to the static route, whatever their order', () => {
    expect(resolve('POST', '/inventory/changes')).toMatchObject({
      route: { path: '/inventory/changes' },
      apiMethod: 'POST /inventory/changes',
    });
    expect(resolve('GET', '/inventory/7')).toMatchObject({
      route: { path: '/inventory/{petId}' },
      pathParameters: { petId: '7' },
    });
    expect(resolve('GET', '/inventory/7/history').route?.path).toBe('/inventory/{petId}/history');
  });

  it("answers another method on the static resource with that resource's 405, not the {petId} route", () => {
    const match = resolve('GET', '/inventory/changes');
    expect(match.route).toBeUndefined();
    expect(match.resourcePath).toBe('/inventory/changes');
    expect(match.apiMethod).toBe('ANY /inventory/changes');
  });

  it('resolves a path no route has to the catch-all, and a known path under another method to its resource', () => {
    expect(routeRequest('GET', '/nowhere', false)).toEqual({ apiMethod: 'ANY /{proxy+}', pathParameters: {} });
    expect(routeRequest('PUT', '/inventory', false)).toMatchObject({ resourcePath: '/inventory' });
    expect(routeRequest('OPTIONS', '/inventory', true).apiMethod).toBe('OPTIONS /inventory');
  });
});

/**
 * "Throttle requests to your REST APIs for better throughput in API Gateway"
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html
 * A token bucket: the burst is the bucket size, the rate refills it; stage settings are default per-method limits.
 */
describe('Local gateway: throttling as API Gateway applies it', () => {
  /** A throttle on a clock the test moves: `take` asks it to let one request to `method` through. */
  function aThrottle(limits: { rateLimit: number; burstLimit: number }) {
    let now = 0;
    const allow = createThrottle(limits, () => now);
    return { take: (method = 'GET /inventory') => allow?.(method), advance: (ms: number) => (now += ms) };
  }

  it('lets a full bucket of requests through at once, then one per 1/rate seconds', () => {
    // Prepare
    const { take, advance } = aThrottle({ rateLimit: 2, burstLimit: 3 });
    // Act
    const burst = [take(), take(), take(), take()];
    advance(499);
    const tooEarly = take();
    advance(1);
    const refilled = take();
    // Assess
    expect(burst).toEqual([true, true, true, false]);
    expect(tooEarly).toBe(false);
    expect(refilled).toBe(true);
  });

  it('never holds more than the burst, however long the bucket was idle', () => {
    const { take, advance } = aThrottle({ rateLimit: 10, burstLimit: 2 });
    take();
    advance(60_000);
    expect([take(), take(), take()]).toEqual([true, true, false]);
  });

  it('keeps one bucket per method, so one busy method does not throttle another', () => {
    const { take } = aThrottle({ rateLimit: 1, burstLimit: 1 });
    expect([take('GET /inventory'), take('GET /inventory'), take('PATCH /inventory/{petId}')]).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('is off without settings or with a zero rate or burst', () => {
    expect(createThrottle(undefined)).toBeUndefined();
    expect(createThrottle({ rateLimit: 0, burstLimit: 10 })).toBeUndefined();
    expect(createThrottle({ rateLimit: 10, burstLimit: 0 })).toBeUndefined();
  });
});

describe('npm start: throttling from the environment', () => {
  const staging = { rateLimit: 20, burstLimit: 40 };

  it('uses the stage limits by default', () => {
    expect(throttlingFromEnv(staging, {})).toEqual(staging);
  });

  it('takes PETSTORE_RATE_LIMIT and PETSTORE_BURST_LIMIT over them', () => {
    expect(throttlingFromEnv(staging, { PETSTORE_RATE_LIMIT: '5', PETSTORE_BURST_LIMIT: '7' })).toEqual({
      rateLimit: 5,
      burstLimit: 7,
    });
    expect(throttlingFromEnv(staging, { PETSTORE_RATE_LIMIT: '0.5' })).toEqual({ rateLimit: 0.5, burstLimit: 40 });
  });

  it.each([{ PETSTORE_RATE_LIMIT: '0' }, { PETSTORE_BURST_LIMIT: '0' }])('turns throttling off with %o', (env) => {
    expect(throttlingFromEnv(staging, env)).toBeUndefined();
  });

  it.each([{ PETSTORE_RATE_LIMIT: '-1' }, { PETSTORE_RATE_LIMIT: 'fast' }, { PETSTORE_BURST_LIMIT: '2.5' }])(
    'refuses %o with a message naming the variable',
    (env) => {
      expect(() => throttlingFromEnv(staging, env)).toThrow(/PETSTORE_(RATE|BURST)_LIMIT/);
    },
  );
});

describe('Local gateway: the CORS preflight headers', () => {
  // aws-cdk-lib Resource.addCorsPreflight: the first origin, or the request's Origin when it is one of the others.
  const origins = ['https://a.example', 'https://b.example'];

  it.each([
    [undefined, 'https://a.example'],
    ['https://b.example', 'https://b.example'],
    ['https://evil.example', 'https://a.example'],
  ])('answers a preflight from %s with Access-Control-Allow-Origin %s', (origin, allowed) => {
    expect(corsPreflightHeaders(origins, origin)).toEqual({
      'Access-Control-Allow-Headers': 'Authorization,Content-Type,Idempotency-Key',
      'Access-Control-Allow-Origin': allowed,
      Vary: 'Origin',
      'Access-Control-Allow-Methods': 'GET,PATCH,POST,OPTIONS',
      'Access-Control-Max-Age': '3600',
    });
  });
});
