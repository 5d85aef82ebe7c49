import { Match } from 'aws-cdk-lib/assertions';
import { BEARER_VALIDATION_REGEX } from '../../functions/api-keys/key';
import { API_STAGE_NAME, allowedMethods, ROUTES } from '../../functions/routes';
import { gatewayResponse } from '../../infra/gateway-responses';
import { functionId } from '../../infra/inventory-stack';
import { STACK_OUTPUTS } from '../../infra/shared-names';
import { STAGES } from '../../infra/stage-config';
import {
  logicalIdStartingWith,
  only,
  resourcesOfType,
  type SynthesizedApp,
  synthesizeApp,
  templateMethods,
} from './synth';

let synthesized: SynthesizedApp;

beforeAll(() => {
  synthesized = synthesizeApp();
});

afterAll(() => synthesized.dispose());

/** Parses a mapping template's Error body as API Gateway would render it (the request id substituted). */
function renderedBody(template: string | undefined): { code: string; message: string; status: number } {
  return JSON.parse(
    (template ?? '').replaceAll('$context.requestId', 'req-1').replaceAll('$context.httpMethod', 'PUT'),
  );
}

const STAGE_EXPECTATIONS = {
  staging: { rateLimit: 20, burstLimit: 40 },
  production: { rateLimit: 100, burstLimit: 200 },
} as const;

describe.each(STAGES)('API of the %s stage', (stage) => {
  const template = () => synthesized.templates[stage];
  const methods = () => templateMethods(template());
  const authorizerId = () => ({
    Ref: logicalIdStartingWith(template(), 'AWS::ApiGateway::Authorizer', 'InventoryApi'),
  });

  it('deploys the API as the stage v1 with throttling, X-Ray, detailed metrics and JSON access logs', () => {
    template().hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: API_STAGE_NAME,
      TracingEnabled: true,
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          MetricsEnabled: true,
          ThrottlingRateLimit: STAGE_EXPECTATIONS[stage].rateLimit,
          ThrottlingBurstLimit: STAGE_EXPECTATIONS[stage].burstLimit,
        }),
      ]),
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.anyValue() },
    });
    const stageProps = only(Object.values(resourcesOfType(template(), 'AWS::ApiGateway::Stage')));
    const { Format } = stageProps.AccessLogSetting as { Format: string };
    const format = JSON.parse(Format);
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      authorizerError: '$context.authorizer.error',
      errorResponseType: '$context.error.responseType',
    });
    expect(JSON.stringify(format)).not.toMatch(/Authorization|identity\.apiKey/i);
  });

  it('outputs the base URL ending in /v1 and the names the operator CLI reads', () => {
    const outputs = template().toJSON().Outputs as Record<string, { Value: unknown }>;
    for (const key of Object.values(STACK_OUTPUTS)) expect(outputs).toHaveProperty(key);
    const stageId = logicalIdStartingWith(template(), 'AWS::ApiGateway::Stage', 'InventoryApi');
    const apiUrl = outputs[STACK_OUTPUTS.apiUrl] as { Value: { 'Fn::Join': [string, unknown[]] } };
    const parts = apiUrl.Value['Fn::Join'][1];
    expect(parts.slice(-2)).toEqual(['/', { Ref: stageId }]);
    expect(outputs[STACK_OUTPUTS.authorizerCacheTtlSeconds]?.Value).toBe('300');
  });

  it('has a method with the TOKEN authorizer and a Lambda proxy integration for every route of the route table', () => {
    for (const route of ROUTES) {
      const method = methods().find((m) => m.path === route.path && m.httpMethod === route.method);
      expect(method).toBeDefined();
      expect(method?.authorizationType).toBe('CUSTOM');
      expect(method?.authorizerId).toEqual(authorizerId());
      expect(method?.integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(method?.integration.Uri)).toContain(`"${functionId(route.operationId)}`);
    }
  });

  it('has no Lambda-backed method that the route table (and so the local gateway) does not know', () => {
    const lambdaMethods = methods()
      .filter((m) => m.integration.Type === 'AWS_PROXY')
      .map((m) => `${m.httpMethod} ${m.path}`)
      .sort();
    expect(lambdaMethods).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).sort());
  });

  it('puts every method, the 404 and 405 answers included, behind the TOKEN authorizer', () => {
    expect(methods().length).toBeGreaterThan(ROUTES.length);
    for (const method of methods()) {
      expect({ method: `${method.httpMethod} ${method.path}`, auth: method.authorizationType }).toEqual({
        method: `${method.httpMethod} ${method.path}`,
        auth: 'CUSTOM',
      });
      expect(method.authorizerId).toEqual(authorizerId());
    }
  });

  it('configures the authorizer on the Authorization header with the Bearer validationRegex and a 300 s cache', () => {
    template().hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      IdentityValidationExpression: BEARER_VALIDATION_REGEX,
      AuthorizerResultTtlInSeconds: 300,
      AuthorizerUri: Match.objectLike({
        'Fn::Join': Match.arrayWith([
          Match.arrayWith([{ 'Fn::GetAtt': [Match.stringLikeRegexp('^AuthorizerFunction'), 'Arn'] }]),
        ]),
      }),
    });
  });

  it('answers unknown paths with an authorized 404 NOT_FOUND mock: the {proxy+} catch-all, / and resources without routes', () => {
    const notFound = gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
    const routePaths = new Set(ROUTES.map((route) => route.path));
    const mockPaths = methods()
      .filter((m) => m.httpMethod === 'ANY' && !routePaths.has(m.path))
      .map((m) => m.path)
      .sort();
    expect(mockPaths).toEqual(['/', '/pets', '/store', '/{proxy+}']);
    for (const method of methods().filter((m) => mockPaths.includes(m.path))) {
      expect(method.integration.Type).toBe('MOCK');
      const response = only(method.integration.IntegrationResponses ?? []);
      expect(response.StatusCode).toBe('404');
      expect(response.SelectionPattern).toBeUndefined();
      expect(response.ResponseParameters).toMatchObject({
        'method.response.header.Content-Type': "'application/json'",
        'method.response.header.Cache-Control': "'no-store'",
      });
      expect(renderedBody(response.ResponseTemplates?.['application/json'])).toEqual({
        code: 'NOT_FOUND',
        message: notFound.message,
        status: 404,
      });
    }
  });

  it('answers another method on a route path with an authorized 405 METHOD_NOT_ALLOWED mock and an Allow header', () => {
    for (const path of new Set(ROUTES.map((route) => route.path))) {
      const method = methods().find((m) => m.path === path && m.httpMethod === 'ANY');
      expect(method?.integration.Type).toBe('MOCK');
      const response = only(method?.integration.IntegrationResponses ?? []);
      expect(response.StatusCode).toBe('405');
      expect(response.ResponseParameters).toEqual({
        'method.response.header.Allow': `'${allowedMethods(path).join(', ')}'`,
        'method.response.header.Content-Type': "'application/json'",
        'method.response.header.Cache-Control': "'no-store'",
      });
      expect(renderedBody(response.ResponseTemplates?.['application/json'])).toEqual({
        code: 'METHOD_NOT_ALLOWED',
        message: `PUT is not allowed on ${path}; allowed: ${allowedMethods(path).join(', ')}.`,
        status: 405,
      });
    }
  });

  it('sends no CORS headers and has no unauthenticated OPTIONS methods when no origins are configured', () => {
    expect(methods().filter((m) => m.httpMethod === 'OPTIONS')).toEqual([]);
    expect(JSON.stringify(template().toJSON())).not.toContain('Access-Control-Allow-Origin');
    expect(JSON.stringify(template().toJSON())).not.toContain('CORS_ALLOWED_ORIGINS');
  });

  it('invokes functions only from this API: each Lambda permission is scoped to its method', () => {
    for (const permission of Object.values(resourcesOfType(template(), 'AWS::Lambda::Permission'))) {
      expect(permission.Principal).toBe('apigateway.amazonaws.com');
      expect(JSON.stringify(permission.SourceArn)).toMatch(/InventoryApi/);
      expect(JSON.stringify(permission.SourceArn)).not.toContain('test-invoke-stage');
    }
  });
});
