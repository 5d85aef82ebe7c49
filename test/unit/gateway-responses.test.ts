import {
  errorTemplate,
  GATEWAY_RESPONSE_TYPES,
  type GatewayResponseType,
  gatewayResponse,
  renderTemplate,
} from '../../service/gateway-responses';

/**
 * "Gateway response types for API Gateway"
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html
 * lists each type with its default status; DEFAULT_4XX and DEFAULT_5XX have none (null).
 */
const DOCUMENTED_DEFAULT_STATUS: Record<GatewayResponseType, number | null> = {
  ACCESS_DENIED: 403,
  API_CONFIGURATION_ERROR: 500,
  AUTHORIZER_CONFIGURATION_ERROR: 500,
  AUTHORIZER_FAILURE: 500,
  BAD_REQUEST_PARAMETERS: 400,
  BAD_REQUEST_BODY: 400,
  DEFAULT_4XX: null,
  DEFAULT_5XX: null,
  EXPIRED_TOKEN: 403,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  INVALID_API_KEY: 403,
  INVALID_SIGNATURE: 403,
  MISSING_AUTHENTICATION_TOKEN: 403,
  QUOTA_EXCEEDED: 429,
  REQUEST_TOO_LARGE: 413,
  RESOURCE_NOT_FOUND: 404,
  THROTTLED: 429,
  UNAUTHORIZED: 401,
  UNSUPPORTED_MEDIA_TYPE: 415,
  WAF_FILTERED: 403,
};

/** Where this API answers differently from the default, on purpose (docs/api.md, "API Gateway's own answers"). */
const DELIBERATE: Partial<Record<GatewayResponseType, number>> = {
  // Storage trouble in the authorizer is worth a retry, not a 500.
  AUTHORIZER_CONFIGURATION_ERROR: 503,
  AUTHORIZER_FAILURE: 503,
  // A failed invocation (crash, Lambda throttling) is worth a retry; its real status varies (502, 500, 504).
  INTEGRATION_FAILURE: 503,
  // An unknown route is a 404 in this API's contract, not API Gateway's 403.
  MISSING_AUTHENTICATION_TOKEN: 404,
};

describe('Gateway responses: the documented types and their statuses', () => {
  it('covers exactly the documented types', () => {
    expect([...GATEWAY_RESPONSE_TYPES].sort()).toEqual(Object.keys(DOCUMENTED_DEFAULT_STATUS).sort());
  });

  it.each(GATEWAY_RESPONSE_TYPES)('answers %s with its documented status unless the API decided otherwise', (type) => {
    // Act
    const spec = gatewayResponse(type);
    // Assess
    const documented = DOCUMENTED_DEFAULT_STATUS[type];
    if (documented === null) {
      expect(spec.installedStatus).toBeUndefined();
      expect(spec.status).toBe(type === 'DEFAULT_4XX' ? 400 : 500);
    } else {
      expect(spec.installedStatus).toBe(DELIBERATE[type] ?? documented);
      expect(spec.status).toBe(spec.installedStatus);
    }
    if (spec.status === 503 || type === 'THROTTLED') expect(spec.headers?.['Retry-After']).toMatch(/^\d+$/);
  });
});

describe('Gateway response templates: substitution only, as API Gateway renders them', () => {
  // "Gateway responses in API Gateway": a non-VTL template with simple variable substitution.
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-gatewayResponse-definition.html
  it('substitutes $context variables, the unset ones by nothing, and leaves everything else as written', () => {
    const template = errorTemplate('INTERNAL', 'Failed ({responseType}) for {requestId} on {method}.');
    expect(template).toBe(
      '{"code":"INTERNAL","message":"Failed ($context.error.responseType) for $context.requestId on $context.httpMethod.","status":500}',
    );
    expect(JSON.parse(renderTemplate(template, { requestId: 'r-1', 'error.responseType': 'DEFAULT_5XX' }))).toEqual({
      code: 'INTERNAL',
      message: 'Failed (DEFAULT_5XX) for r-1 on .',
      status: 500,
    });
  });

  // "Variables for data transformations for API Gateway": $context.status is for access logging only.
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html
  it.each(['$context.status', '$context.responseLatency', '$context.integration.status'])(
    'refuses %s, which a gateway response template cannot read',
    (variable) => {
      expect(() => renderTemplate(`{"x":"${variable}"}`, {})).toThrow(/not available in a gateway response template/);
    },
  );
});
