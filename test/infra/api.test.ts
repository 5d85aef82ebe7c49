import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { BEARER_VALIDATION_REGEX } from '../../functions/api-keys/key';
import { assertWafHeader } from '../../infra/constructs/firewall';
import { refuseUnmappedPreflightBodies } from '../../infra/constructs/inventory-api';
import { functionId } from '../../infra/inventory-stack';
import { DEFAULT_REGION, STAGES } from '../../infra/stage-config';
import { defaultFunctionTimeoutMs } from '../../local/gateway';
import { gatewayResponse } from '../../service/gateway-responses';
import { accountStackName, STACK_OUTPUTS } from '../../service/names';
import {
  API_STAGE_NAME,
  AUTHORIZER_HANDLER,
  AUTHORIZER_TIMEOUT_SECONDS,
  allowedMethods,
  LIST_INVENTORY_TIMEOUT_SECONDS,
  ROUTES,
} from '../../service/routes';
import { integrationRequestOutcome } from './integration-evaluation';
import {
  functionProperties,
  logicalIdStartingWith,
  only,
  resourcesOfType,
  synthesizeBeforeAll,
  templateMethods,
} from './synth';

const synthesized = synthesizeBeforeAll();

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
  const template = () => synthesized().templates[stage];
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
      // The streamed list's own timings (response-streaming-troubleshoot.html, access logging).
      responseTransferMode: '$context.integration.responseTransferMode',
      timeToAllHeaders: '$context.integration.timeToAllHeaders',
      timeToFirstContent: '$context.integration.timeToFirstContent',
    });
    expect(JSON.stringify(format)).not.toMatch(/Authorization|identity\.apiKey/i);
  });

  it('logs errors of every method to its execution log group (never request data), which the stack owns', () => {
    // The account stack provides the CloudWatch role execution logging needs (see the account setting tests).
    const stageId = logicalIdStartingWith(template(), 'AWS::ApiGateway::Stage', 'InventoryApi');
    const stageResource = template().toJSON().Resources[stageId];
    expect(stageResource.Properties.MethodSettings).toEqual([
      expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false }),
    ]);
    const logGroupId = logicalIdStartingWith(template(), 'AWS::Logs::LogGroup', 'InventoryApiExecutionLogs');
    // API Gateway writes execution logs to API-Gateway-Execution-Logs_{rest-api-id}/{stage-name}; created before the
    // stage, the group is the stack's (with retention) instead of one API Gateway creates on first write.
    expect(resourcesOfType(template(), 'AWS::Logs::LogGroup')[logGroupId]).toEqual({
      LogGroupName: {
        'Fn::Join': [
          '',
          [
            'API-Gateway-Execution-Logs_',
            { Ref: logicalIdStartingWith(template(), 'AWS::ApiGateway::RestApi', 'InventoryApi') },
            `/${API_STAGE_NAME}`,
          ],
        ],
      },
      RetentionInDays: stage === 'production' ? 90 : 14,
    });
    expect(stageResource.DependsOn).toContain(logGroupId);
  });

  it('outputs the base URL ending in /v1 and the names the operator CLI reads', () => {
    const outputs = template().toJSON().Outputs as Record<string, { Value: unknown }>;
    // Every output but the custom domain's target, which exists only with a custom domain (test/infra/stage-config).
    for (const key of Object.values(STACK_OUTPUTS).filter((name) => name !== STACK_OUTPUTS.customDomainTarget))
      expect(outputs).toHaveProperty(key);
    expect(outputs).not.toHaveProperty(STACK_OUTPUTS.customDomainTarget);
    const stageId = logicalIdStartingWith(template(), 'AWS::ApiGateway::Stage', 'InventoryApi');
    const apiUrl = outputs[STACK_OUTPUTS.apiUrl] as { Value: { 'Fn::Join': [string, unknown[]] } };
    const parts = apiUrl.Value['Fn::Join'][1];
    expect(parts.slice(-2)).toEqual(['/', { Ref: stageId }]);
    expect(outputs[STACK_OUTPUTS.authorizerCacheTtlSeconds]?.Value).toBe('300');
    expect(outputs[STACK_OUTPUTS.restApiId]?.Value).toEqual({
      Ref: logicalIdStartingWith(template(), 'AWS::ApiGateway::RestApi', 'InventoryApi'),
    });
    expect(outputs[STACK_OUTPUTS.apiStageName]?.Value).toEqual({ Ref: stageId });
  });

  it('has a Lambda proxy integration to its own function for every route of the route table', () => {
    for (const route of ROUTES) {
      const method = methods().find((m) => m.path === route.path && m.httpMethod === route.method);
      expect(method?.integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(method?.integration.Uri)).toContain(`"${functionId(route.operationId)}`);
    }
  });

  /**
   * "Set up a Lambda proxy integration with payload response streaming in API Gateway"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html) and the
   * quotas page: a STREAM integration may wait up to 15 minutes. Its timeout is a few seconds past the function's, so
   * Lambda stops a hung list first (the stream is cut: the same answer locally) and a cold start never meets the
   * integration's limit.
   */
  it("streams GET /inventory only: STREAM transfer mode through the alias's response-streaming URI, timing out a few seconds after its function", () => {
    const lambdaMethods = methods().filter((m) => m.integration.Type === 'AWS_PROXY');
    const streamed = lambdaMethods.filter((m) => m.integration.ResponseTransferMode === 'STREAM');
    expect(streamed.map((m) => `${m.httpMethod} ${m.path}`)).toEqual(['GET /inventory']);
    const list = only(streamed);
    const uri = JSON.stringify(list.integration.Uri);
    // "Set up a Lambda proxy integration with payload response streaming in API Gateway": InvokeWithResponseStream.
    expect(uri).toContain('/2021-11-15/functions/');
    expect(uri).toContain('/response-streaming-invocations');
    expect(uri).toContain(`"${functionId('listInventory')}LiveAlias`);
    expect(list.integration.TimeoutInMillis).toBe((LIST_INVENTORY_TIMEOUT_SECONDS + 5) * 1000);
    expect(list.integration.TimeoutInMillis).toBeGreaterThan(LIST_INVENTORY_TIMEOUT_SECONDS * 1000);
    expect(list.integration.TimeoutInMillis).toBeLessThanOrEqual(15 * 60 * 1000);
    for (const buffered of lambdaMethods.filter((m) => m !== list)) {
      expect(buffered.integration.ResponseTransferMode).toBeUndefined();
      expect(JSON.stringify(buffered.integration.Uri)).toContain('/2015-03-31/functions/');
    }
  });

  /**
   * "Amazon API Gateway quotas" (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html): a REST
   * integration times out at 29 s unless set otherwise. With every function's timeout at most its integration's, a
   * hung function is stopped by Lambda (a function error, INTEGRATION_FAILURE) and never meets INTEGRATION_TIMEOUT:
   * the local gateway enforces only the function timeouts, with these very values.
   */
  it("gives no route function a timeout longer than its integration's, and the local gateway the same timeouts", () => {
    const functionTimeoutSeconds = (id: string) => functionProperties(template(), id).Timeout as number;
    for (const route of ROUTES) {
      const method = only(methods().filter((m) => m.path === route.path && m.httpMethod === route.method));
      const seconds = functionTimeoutSeconds(functionId(route.operationId));
      expect(seconds * 1000).toBeLessThanOrEqual(method.integration.TimeoutInMillis ?? 29_000);
      expect(defaultFunctionTimeoutMs(route.handler)).toBe(seconds * 1000);
    }
    expect(defaultFunctionTimeoutMs(AUTHORIZER_HANDLER)).toBe(functionTimeoutSeconds('AuthorizerFunction') * 1000);
    // What `keys revoke --stage` waits out before its second flush: no authorizer call outlives it.
    expect(functionTimeoutSeconds('AuthorizerFunction')).toBe(AUTHORIZER_TIMEOUT_SECONDS);
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

  it.each([
    [undefined, 'transformed'],
    ['application/json', 'transformed'],
    ['Application/JSON; charset=utf-8', 'transformed'],
    ['text/plain', 'refused with 415'],
    ['application/x-www-form-urlencoded', 'refused with 415'],
    ['application/xml', 'refused with 415'],
  ] as const)(
    'answers a body of Content-Type %s on every 404/405 mock: %s, never passed through to the mock (a 500)',
    (contentType, expected) => {
      // What API Gateway does with each (test/infra/integration-evaluation.ts, from its passthrough-behaviour page).
      const mocks = methods().filter((m) => m.httpMethod === 'ANY' && m.integration.Type === 'MOCK');
      expect(mocks.length).toBeGreaterThan(4);
      for (const method of mocks) {
        expect({ method: method.path, outcome: integrationRequestOutcome(method.integration, contentType) }).toEqual({
          method: method.path,
          outcome: expected,
        });
      }
      // The 415 itself is the stage's UNSUPPORTED_MEDIA_TYPE response (gateway-responses.test.ts).
    },
  );

  it('sends no CORS headers and has no unauthenticated OPTIONS methods when no origins are configured', () => {
    expect(methods().filter((m) => m.httpMethod === 'OPTIONS')).toEqual([]);
    expect(JSON.stringify(template().toJSON())).not.toContain('Access-Control-Allow-Origin');
    expect(JSON.stringify(template().toJSON())).not.toContain('CORS_ALLOWED_ORIGINS');
  });

  // "Binary media types for REST APIs in API Gateway": a proxy function's base64 body is decoded only for a media type
  // in binaryMediaTypes. The local gateway sends it as text, as a stage without any does (local-gateway-semantics).
  it('configures no binary media types, so no answer is base64-decoded on the way out', () => {
    const apis = Object.values(template().findResources('AWS::ApiGateway::RestApi'));
    expect(apis).toHaveLength(1);
    expect(apis[0]?.Properties?.BinaryMediaTypes).toBeUndefined();
  });
});

describe("API Gateway's account setting (the app)", () => {
  // "To avoid overwriting other roles, you should only have one AWS::ApiGateway::Account resource per region per
  // account" — AWS::ApiGateway::Account, AWS CloudFormation Template Reference,
  // https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-apigateway-account.html
  it('sets the CloudWatch role once for the account and region both stages share, in its own stack', () => {
    expect(Object.keys(synthesized().accountTemplates)).toEqual([accountStackName(DEFAULT_REGION)]);
    const account = synthesized().accountTemplates[accountStackName(DEFAULT_REGION)] as Template;
    account.resourceCountIs('AWS::ApiGateway::Account', 1);
    const roleId = logicalIdStartingWith(account, 'AWS::IAM::Role', 'ApiGatewayCloudWatchRole');
    account.hasResourceProperties('AWS::ApiGateway::Account', { CloudWatchRoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] } });
    for (const stage of STAGES) synthesized().templates[stage].resourceCountIs('AWS::ApiGateway::Account', 0);
  });

  it('trusts only API Gateway with the AWS managed logging policy, and keeps role and setting if the stack goes', () => {
    const account = synthesized().accountTemplates[accountStackName(DEFAULT_REGION)] as Template;
    const resources = account.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>;
    const roleId = logicalIdStartingWith(account, 'AWS::IAM::Role', 'ApiGatewayCloudWatchRole');
    expect(resourcesOfType(account, 'AWS::IAM::Role')[roleId]).toMatchObject({
      AssumeRolePolicyDocument: {
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } }],
      },
      ManagedPolicyArns: [
        {
          'Fn::Join': [
            '',
            ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs'],
          ],
        },
      ],
    });
    for (const resource of Object.values(resources)) expect(resource.DeletionPolicy).toBe('Retain');
  });

  it('deploys the account stack before either stage: each stage stack depends on it', () => {
    const [accountStack] = [...synthesized().accountStacks.values()];
    for (const stage of STAGES) expect(synthesized().stacks[stage].dependencies).toContain(accountStack);
  });
});

/**
 * A REST API's stage serves the Deployment it points at, a snapshot of the methods when it was made ("Deploy a REST
 * API in API Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/how-to-deploy-api.html); CDK makes
 * a new Deployment only when its logical id changes, which it derives from the methods' own properties, not from
 * property overrides. So the preflight override must change the id itself, or a deployed stage keeps its old preflights.
 */
describe('The CORS preflight override reaches a deployed stage', () => {
  const deploymentId = (withOverride: boolean) => {
    // Without the built-in CloudFormation validation, which reads the template and never changes it (nag.test.ts
    // runs it) and whose engine takes seconds to start.
    const app = new App({ builtinCloudFormationValidation: false });
    const stack = new Stack(app, 'PreflightProbe');
    const api = new RestApi(stack, 'Api', {
      defaultCorsPreflightOptions: { allowOrigins: ['https://staff.example.com'] },
    });
    api.root.addResource('inventory').addMethod('GET', new MockIntegration());
    if (withOverride) refuseUnmappedPreflightBodies(api);
    const template = Template.fromStack(stack);
    const options = Object.values(
      template.findResources('AWS::ApiGateway::Method', { Properties: { HttpMethod: 'OPTIONS' } }),
    );
    return {
      id: Object.keys(template.findResources('AWS::ApiGateway::Deployment'))[0],
      passthrough: options.map(
        (method) =>
          (method.Properties as { Integration: { PassthroughBehavior?: string } }).Integration.PassthroughBehavior,
      ),
    };
  };

  it('sets NEVER on every OPTIONS method and gives the Deployment a new logical id, so the stage is redeployed', () => {
    const before = deploymentId(false);
    const after = deploymentId(true);
    expect(before.passthrough.length).toBeGreaterThan(0);
    expect(new Set(after.passthrough)).toEqual(new Set(['NEVER']));
    expect(after.id).not.toBe(before.id);
  });
});

describe('Web ACL in front of production', () => {
  const template = () => synthesized().templates.production;
  const webAcl = () => only(Object.values(resourcesOfType(template(), 'AWS::WAFv2::WebACL')));

  it("refuses what WAF's CustomHTTPHeader refuses (name and value limits), the check synth runs on every block header", () => {
    expect(() => assertWafHeader('Access-Control-Allow-Origin', `https://${'a'.repeat(250)}.example`)).toThrow(
      /WAF refuses/,
    );
    expect(() => assertWafHeader('Bad Name', 'x')).toThrow(/WAF refuses/);
    expect(() => assertWafHeader('Access-Control-Allow-Origin', 'https://staff.example.com')).not.toThrow();
  });

  it('associates a regional web ACL, allowing by default, with the v1 stage', () => {
    expect(webAcl()).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    const stageId = logicalIdStartingWith(template(), 'AWS::ApiGateway::Stage', 'InventoryApi');
    const association = only(Object.values(resourcesOfType(template(), 'AWS::WAFv2::WebACLAssociation')));
    expect(JSON.stringify(association.ResourceArn)).toContain(`{"Ref":"${stageId}"}`);
    expect(association.WebACLArn).toEqual({
      'Fn::GetAtt': [logicalIdStartingWith(template(), 'AWS::WAFv2::WebACL', 'Firewall'), 'Arn'],
    });
  });

  it('has no web ACL in staging', () => {
    synthesized().templates.staging.resourceCountIs('AWS::WAFv2::WebACL', 0);
    synthesized().templates.staging.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
  });
});
