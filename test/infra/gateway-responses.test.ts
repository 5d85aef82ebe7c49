import { STAGES } from '../../infra/stage-config';
import {
  CORS_EXPOSED_HEADERS,
  CORS_PREFLIGHT,
  corsPreflightHeaders,
  GATEWAY_RESPONSE_TYPES,
  gatewayResponse,
  renderTemplate,
} from '../../service/gateway-responses';
import { ROUTES } from '../../service/routes';
import { assertMatchesContract } from '../helpers/contract';
import { integrationRequestOutcome } from './integration-evaluation';
import { resourcesOfType, type SynthesizedApp, synthesizeBeforeAll, templateMethods } from './synth';

/**
 * The stack's gateway responses, rendered the way API Gateway substitutes a gateway response template.
 *
 * AWS docs followed:
 * - "Gateway response types for API Gateway"
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html
 *   (the types, their default statuses; a DEFAULT_4XX/5XX status code rewrites every type not configured itself)
 * - "Gateway responses in API Gateway" / "Set up gateway responses to customize error responses"
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-gatewayResponse-definition.html and
 *   "x-amazon-apigateway-gateway-responses.responseTemplates object"
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.responseTemplates.html
 *   (a template not processed by VTL: simple substitution of `$context` variables)
 * - "Variables for data transformations for API Gateway"
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html
 *   (`$context.status` is access-logging only)
 * - "CORS for REST APIs in API Gateway"
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/how-to-cors.html (the preflight is a MOCK OPTIONS)
 */

type GatewayResponseProps = {
  ResponseType: string;
  StatusCode?: string;
  ResponseParameters?: Record<string, string>;
  ResponseTemplates?: Record<string, string>;
};

const CONTEXT = { requestId: 'req-1', httpMethod: 'GET' };

const ORIGINS = ['https://staff.example.com', 'https://tools.example.com'];
const synthesized = synthesizeBeforeAll();
const withCors = synthesizeBeforeAll({
  'staging:corsOrigins': ORIGINS.join(','),
  'production:corsOrigins': ORIGINS[0],
});

function gatewayResponses(app: SynthesizedApp, stage: (typeof STAGES)[number]): GatewayResponseProps[] {
  return Object.values(resourcesOfType(app.templates[stage], 'AWS::ApiGateway::GatewayResponse')).map(
    (props) => props as GatewayResponseProps,
  );
}

describe.each(STAGES)('Gateway responses of the %s stage', (stage) => {
  const responses = () => gatewayResponses(synthesized(), stage);
  const byType = (type: string) => responses().filter((props) => props.ResponseType === type);

  it('configures every response type of the AWS list exactly once, and nothing else', () => {
    // Assess
    expect(
      responses()
        .map((props) => props.ResponseType)
        .sort(),
    ).toEqual([...GATEWAY_RESPONSE_TYPES].sort());
  });

  it.each(GATEWAY_RESPONSE_TYPES.filter((type) => !['DEFAULT_4XX', 'DEFAULT_5XX'].includes(type)))(
    'answers %s with its own status and an Error body whose status is that status, rendered as API Gateway substitutes it',
    (type) => {
      // Prepare
      const spec = gatewayResponse(type);
      const [props] = byType(type);
      // Act
      const text = renderTemplate(props?.ResponseTemplates?.['application/json'] ?? '', {
        ...CONTEXT,
        'error.responseType': type,
      });
      // Assess
      expect(props?.StatusCode).toBe(String(spec.status));
      expect(JSON.parse(text)).toEqual({
        code: spec.code,
        message: spec.message.replaceAll('{requestId}', 'req-1'),
        status: spec.status,
      });
      assertMatchesContract('GET', undefined, {
        status: spec.status,
        headers: new Headers({ 'content-type': 'application/json' }),
        text,
        json: JSON.parse(text),
      });
      expect(props?.ResponseParameters).toEqual(
        Object.fromEntries(
          Object.entries({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...spec.headers }).map(
            ([name, value]) => [`gatewayresponse.header.${name}`, `'${value}'`],
          ),
        ),
      );
    },
  );

  it.each(['DEFAULT_4XX', 'DEFAULT_5XX'] as const)(
    'installs %s without a status code, so API Gateway keeps its own status, with an Error body of the class that names the type',
    (type) => {
      // Prepare
      const spec = gatewayResponse(type);
      const [props] = byType(type);
      // Act: what reaches a fallback is a type with no response of its own, e.g. one added to API Gateway later.
      const text = renderTemplate(props?.ResponseTemplates?.['application/json'] ?? '', {
        ...CONTEXT,
        'error.responseType': 'SOME_NEW_TYPE',
      });
      // Assess
      expect(props).toBeDefined();
      expect(props?.StatusCode).toBeUndefined();
      expect(JSON.parse(text)).toEqual({
        code: type === 'DEFAULT_4XX' ? 'BAD_REQUEST' : 'INTERNAL',
        message: expect.stringContaining('(SOME_NEW_TYPE). Request id: req-1.'),
        status: spec.status,
      });
      expect(spec.status).toBe(type === 'DEFAULT_4XX' ? 400 : 500);
    },
  );
});

describe('Gateway responses and preflight of a stage with CORS origins', () => {
  it('gives every gateway response the allowed origin when exactly one is configured, and none with several', () => {
    // Assess
    for (const props of gatewayResponses(withCors(), 'production')) {
      expect(props.ResponseParameters?.['gatewayresponse.header.Access-Control-Allow-Origin']).toBe(`'${ORIGINS[0]}'`);
    }
    for (const props of gatewayResponses(withCors(), 'staging')) {
      expect(props.ResponseParameters?.['gatewayresponse.header.Access-Control-Allow-Origin']).toBeUndefined();
    }
  });

  // Fetch Standard (https://fetch.spec.whatwg.org/): without Access-Control-Allow-Origin a browser hides the whole
  // answer, and without Access-Control-Expose-Headers every header a script would read (WWW-Authenticate, Retry-After,
  // Allow) but the safelisted few.
  it('gives every gateway response, 404/405 mock and firewall block the origin, Vary and the exposed headers with one origin', () => {
    const expected = {
      'Access-Control-Allow-Origin': `'${ORIGINS[0]}'`,
      Vary: "'Origin'",
      'Access-Control-Expose-Headers': `'${CORS_EXPOSED_HEADERS.join(', ')}'`,
    };
    const mocks = templateMethods(withCors().templates.production).filter(
      (method) => method.httpMethod === 'ANY' && method.integration.Type === 'MOCK',
    );
    expect(mocks.length).toBeGreaterThan(4);
    for (const props of gatewayResponses(withCors(), 'production')) {
      for (const [name, value] of Object.entries(expected))
        expect(props.ResponseParameters?.[`gatewayresponse.header.${name}`]).toBe(value);
    }
    for (const mock of mocks) {
      const [response] = mock.integration.IntegrationResponses ?? [];
      for (const [name, value] of Object.entries(expected))
        expect(response?.ResponseParameters?.[`method.response.header.${name}`]).toBe(value);
    }
    // The firewall's blocks (403, 413, 429) too: WAF answers before API Gateway, so nothing else would add them.
    const [webAcl] = Object.values(resourcesOfType(withCors().templates.production, 'AWS::WAFv2::WebACL'));
    const blocks = ((webAcl?.Rules ?? []) as { Action?: { Block?: { CustomResponse: Record<string, unknown> } } }[])
      .map((rule) => rule.Action?.Block?.CustomResponse)
      .filter((custom) => custom !== undefined);
    expect(blocks.length).toBeGreaterThan(1);
    for (const custom of blocks) {
      const headers = Object.fromEntries(
        (custom.ResponseHeaders as { Name: string; Value: string }[]).map(({ Name, Value }) => [Name, `'${Value}'`]),
      );
      expect(headers).toMatchObject(expected);
    }
    // With several origins a static header cannot name the one that asked: none, on mocks as on responses.
    for (const mock of templateMethods(withCors().templates.staging).filter((method) => method.httpMethod === 'ANY')) {
      const [response] = mock.integration.IntegrationResponses ?? [];
      expect(response?.ResponseParameters?.['method.response.header.Access-Control-Allow-Origin']).toBeUndefined();
    }
  });

  it.each([
    ['production', ORIGINS.slice(0, 1)],
    ['staging', ORIGINS],
  ] as const)(
    'answers OPTIONS on every resource of %s with an unauthenticated MOCK 204 whose headers the local gateway sends too',
    (stage, origins) => {
      // Prepare
      const methods = templateMethods(withCors().templates[stage]);
      const preflights = methods.filter((method) => method.httpMethod === 'OPTIONS');
      const resources = new Set(methods.map((method) => method.path));
      // Assess
      expect(new Set(preflights.map((method) => method.path))).toEqual(resources);
      for (const preflight of preflights) {
        expect(preflight.authorizationType).toBe('NONE');
        expect(preflight.integration.Type).toBe('MOCK');
        // A form or text Content-Type is refused (415), never passed to the mock, whose answer would then be 500;
        // a browser's preflight has none, which counts as JSON (test/infra/integration-evaluation.ts cites the page).
        expect(integrationRequestOutcome(preflight.integration, 'application/x-www-form-urlencoded')).toBe(
          'refused with 415',
        );
        expect(integrationRequestOutcome(preflight.integration, undefined)).toBe('transformed');
        const [response] = preflight.integration.IntegrationResponses ?? [];
        expect(response?.StatusCode).toBe(String(CORS_PREFLIGHT.status));
        expect(response?.ResponseParameters).toEqual(
          Object.fromEntries(
            Object.entries(corsPreflightHeaders(origins, undefined)).map(([name, value]) => [
              `method.response.header.${name}`,
              `'${value}'`,
            ]),
          ),
        );
        // With several origins the template echoes the request's Origin when it is one of the others.
        const template = response?.ResponseTemplates?.['application/json'];
        if (origins.length > 1) {
          for (const other of origins.slice(1)) expect(template).toContain(`$origin == "${other}"`);
          expect(corsPreflightHeaders(origins, origins[1])['Access-Control-Allow-Origin']).toBe(origins[1]);
        } else {
          expect(template).toBeUndefined();
        }
      }
      expect(CORS_PREFLIGHT.allowMethods).toEqual([...new Set(ROUTES.map((route) => route.method)), 'OPTIONS']);
    },
  );
});
