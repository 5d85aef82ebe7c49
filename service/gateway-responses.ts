import { COMMON_HEADERS } from './common-headers';
import { ERROR_CODES, type ErrorCode, RETRY_AFTER_SECONDS } from './error-codes';
import { ROUTES } from './routes';

/**
 * API Gateway's own answers as Error bodies, installed by the stack and rendered by the local gateway: a template
 * cannot read its status ("Gateway responses in API Gateway"), so each type has its own, the status written in.
 */
interface GatewayAnswer {
  code: ErrorCode;
  /** May contain `{requestId}` and `{responseType}`, which become `$context` variables in the template. */
  message: string;
  headers?: Readonly<Record<string, string>>;
}

const RETRY_AFTER = { 'Retry-After': String(RETRY_AFTER_SECONDS) } as const;

const KEY_CHECK_UNAVAILABLE = {
  code: 'SERVICE_UNAVAILABLE',
  message: 'The API key could not be checked right now; retry shortly. Request id: {requestId}.',
  headers: RETRY_AFTER,
} as const;

/**
 * The answer of every response type of "Gateway response types for API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
 */
const ANSWERS = {
  UNAUTHORIZED: {
    code: 'UNAUTHORIZED',
    message: 'A valid API key is required: send Authorization: Bearer <key>.',
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  ACCESS_DENIED: { code: 'ACCESS_DENIED', message: 'This API key may not call this operation.' },
  INVALID_API_KEY: { code: 'ACCESS_DENIED', message: 'This API key may not call this API.' },
  EXPIRED_TOKEN: { code: 'ACCESS_DENIED', message: 'The request credentials have expired.' },
  INVALID_SIGNATURE: { code: 'ACCESS_DENIED', message: 'The request signature is not valid.' },
  WAF_FILTERED: { code: 'ACCESS_DENIED', message: 'The request was blocked by the web application firewall.' },
  // The 404 mocks answer unknown routes; API Gateway sends this type for a resource or method it does not have.
  MISSING_AUTHENTICATION_TOKEN: { code: 'NOT_FOUND', message: 'No such route; see /v1/inventory.' },
  RESOURCE_NOT_FOUND: { code: 'NOT_FOUND', message: 'No such route; see /v1/inventory.' },
  THROTTLED: { code: 'THROTTLED', message: 'Too many requests; slow down and retry.', headers: RETRY_AFTER },
  // A quota lasts for its period: no Retry-After a client could trust.
  QUOTA_EXCEEDED: { code: 'THROTTLED', message: 'The request quota is exhausted; retry in the next period.' },
  BAD_REQUEST_BODY: { code: 'VALIDATION_FAILED', message: 'The request body is invalid.' },
  BAD_REQUEST_PARAMETERS: { code: 'VALIDATION_FAILED', message: 'The request parameters are invalid.' },
  // Installed for completeness, but AWS does not apply a customized REQUEST_TOO_LARGE (BODY_OVER_GATEWAY_LIMIT).
  REQUEST_TOO_LARGE: {
    code: 'PAYLOAD_TOO_LARGE',
    message: 'The request is too large: at most 10,240 bytes of header values and a 10 MB body.',
  },
  UNSUPPORTED_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request media type is not supported.' },
  // A TOKEN authorizer that throws anything but `Unauthorized` (here: the keys table unreadable) is this type.
  AUTHORIZER_CONFIGURATION_ERROR: KEY_CHECK_UNAVAILABLE,
  AUTHORIZER_FAILURE: KEY_CHECK_UNAVAILABLE,
  // The function could not be invoked or failed to answer (crash, Lambda throttling, a request or response over
  // Lambda's 6 MB invoke payload limit).
  INTEGRATION_FAILURE: {
    code: 'SERVICE_UNAVAILABLE',
    message:
      'The service could not process the request right now; retry shortly (requests over 6 MB are never accepted). ' +
      'Request id: {requestId}.',
    headers: RETRY_AFTER,
  },
  INTEGRATION_TIMEOUT: { code: 'GATEWAY_TIMEOUT', message: 'The request timed out. Request id: {requestId}.' },
  API_CONFIGURATION_ERROR: { code: 'INTERNAL', message: 'An internal error occurred. Request id: {requestId}.' },
  DEFAULT_4XX: {
    code: 'BAD_REQUEST',
    message: 'The request was refused by the API gateway ({responseType}). Request id: {requestId}.',
  },
  DEFAULT_5XX: {
    code: 'INTERNAL',
    message: 'An internal error occurred in the API gateway ({responseType}). Request id: {requestId}.',
  },
} as const satisfies Record<string, GatewayAnswer>;

export type GatewayResponseType = keyof typeof ANSWERS;

/** Every response type API Gateway documents, in the order the stack installs them. */
export const GATEWAY_RESPONSE_TYPES = Object.keys(ANSWERS) as GatewayResponseType[];

/**
 * The fallbacks are installed without a status, which would rewrite that of every type without its own response:
 * they meet only what API Gateway sends under no documented type, so their body says the class (400 / 500).
 */
const FALLBACK_TYPES: readonly GatewayResponseType[] = ['DEFAULT_4XX', 'DEFAULT_5XX'];

/**
 * An answer API Gateway makes that no gateway response of this API can shape, so it is not the Error body. Clients
 * branch on the status alone; the contract (openapi.yaml; docs/api.md, "Errors") lists them.
 */
export interface UnshapedGatewayAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/**
 * A request outside the `/v1` stage reaches no API: API Gateway answers this, without CORS headers
 * (https://repost.aws/knowledge-center/api-gateway-troubleshoot-403-forbidden, a wrong stage name).
 */
export const OUTSIDE_THE_STAGE: UnshapedGatewayAnswer = {
  status: 403,
  headers: { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'ForbiddenException' },
  body: '{"message":"Forbidden"}',
};

/**
 * API Gateway's 413 for a body over its quota, as a stage sends it (no CORS headers): "Customizing the default gateway
 * response for 413 REQUEST_TOO_LARGE isn't currently supported" (API Gateway's known issues).
 */
export const BODY_OVER_GATEWAY_LIMIT: UnshapedGatewayAnswer = {
  status: 413,
  headers: { 'Content-Type': 'text/plain' },
  body: 'HTTP content length exceeded 10485760 bytes.',
};

export interface GatewayResponse extends GatewayAnswer {
  type: GatewayResponseType;
  /** The status the body claims and the local gateway sends. */
  status: number;
  /** The status the stack installs; undefined for the fallbacks, which keep API Gateway's own. */
  installedStatus: number | undefined;
}

export function gatewayResponse(type: GatewayResponseType): GatewayResponse {
  const status = ERROR_CODES[ANSWERS[type].code];
  return { type, ...ANSWERS[type], status, installedStatus: FALLBACK_TYPES.includes(type) ? undefined : status };
}

/**
 * The headers of an answer API Gateway or WAF makes itself: the ones every response carries, the answer's own, and
 * the allowed origin when exactly one is configured (a static header cannot echo one of several origins).
 */
export function gatewayResponseHeaders(
  spec: Pick<GatewayAnswer, 'headers'>,
  corsOrigins: readonly string[],
): Record<string, string> {
  return { ...COMMON_HEADERS, ...gatewayCorsHeaders(corsOrigins), ...spec.headers };
}

/**
 * Headers a script may read besides the CORS-safelisted ones (Fetch Standard): every other header the contract
 * documents and the request id, on the functions' answers and API Gateway's (test/unit/cors-contract.test.ts).
 */
export const CORS_EXPOSED_HEADERS = [
  'Allow',
  'Deprecation',
  'Idempotent-Replayed',
  'Link',
  'Retry-After',
  'Sunset',
  'WWW-Authenticate',
  'x-amzn-RequestId',
] as const;

/**
 * The CORS headers of an answer API Gateway makes itself, which can only be static: those of the one configured
 * origin, and none with several (a static header cannot echo the one that asked).
 */
export function gatewayCorsHeaders(corsOrigins: readonly string[]): Record<string, string> {
  const [origin] = corsOrigins;
  if (corsOrigins.length !== 1 || origin === undefined) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    ...(origin === '*' ? {} : { Vary: 'Origin' }),
    'Access-Control-Expose-Headers': CORS_EXPOSED_HEADERS.join(', '),
  };
}

/** The `$context` variables the templates use, for the placeholders of a message. */
const PLACEHOLDERS = {
  '{requestId}': 'requestId',
  '{responseType}': 'error.responseType',
  '{method}': 'httpMethod',
} as const;

export type TemplateContext = Partial<Record<(typeof PLACEHOLDERS)[keyof typeof PLACEHOLDERS], string>>;

/** The Error body as a mapping template, with the placeholders of `message` as `$context` variables. */
export function errorTemplate(code: ErrorCode, message: string): string {
  let template = JSON.stringify({ code, message, status: ERROR_CODES[code] });
  for (const [placeholder, variable] of Object.entries(PLACEHOLDERS)) {
    template = template.replaceAll(placeholder, `$context.${variable}`);
  }
  return template;
}

/**
 * Renders a template as API Gateway substitutes a gateway response's (an unset variable by nothing); throws on one
 * errorTemplate does not write, such as `$context.status` ("Variables for data transformations": access logging only).
 */
export function renderTemplate(template: string, context: TemplateContext): string {
  const allowed = new Set<string>(Object.values(PLACEHOLDERS));
  return template.replace(/\$context\.([A-Za-z]+(?:\.[A-Za-z]+)*)/g, (_match, name: string) => {
    if (!allowed.has(name)) throw new Error(`$context.${name} is not available in a gateway response template here`);
    return context[name as keyof TemplateContext] ?? '';
  });
}

/**
 * The API Gateway resources the stack creates: one per route path and per prefix of one, plus `/`. Paths the
 * resources do not cover fall to the root `{proxy+}` resource.
 */
export function apiResourcePaths(): string[] {
  const paths = new Set<string>(['/']);
  for (const route of ROUTES) {
    const segments = route.path.split('/').filter(Boolean);
    for (let i = 1; i <= segments.length; i++) paths.add(`/${segments.slice(0, i).join('/')}`);
  }
  return [...paths];
}

/** The resource of the root greedy path variable that answers every other path with 404. */
export const CATCH_ALL_RESOURCE = '/{proxy+}';

/** The message of a 405, with `{method}` for the method used. */
export function methodNotAllowedMessage(path: string, allow: string): string {
  return `{method} is not allowed on ${path}; allowed: ${allow}.`;
}

/**
 * The CORS preflight the stack's `defaultCorsPreflightOptions` installs on every resource when origins are
 * configured: an unauthenticated OPTIONS method with a MOCK integration.
 */
export const CORS_PREFLIGHT = {
  allowMethods: [...new Set(ROUTES.map((route) => route.method)), 'OPTIONS'],
  // Every request header the contract documents that a browser does not send on its own (test/unit/cors-contract).
  allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key'],
  maxAgeSeconds: 3600,
  status: 204,
} as const;

/**
 * The headers of that preflight answer, as aws-cdk-lib's `Resource.addCorsPreflight` builds them: the first allowed
 * origin, or the request's `Origin` when it is one of the others (its response template overrides the header).
 */
export function corsPreflightHeaders(
  corsOrigins: readonly string[],
  requestOrigin: string | undefined,
): Record<string, string> {
  const [first] = corsOrigins;
  if (first === undefined) throw new Error('A CORS preflight needs at least one allowed origin');
  const others = corsOrigins.slice(1);
  const origin = requestOrigin !== undefined && others.includes(requestOrigin) ? requestOrigin : first;
  return {
    'Access-Control-Allow-Headers': CORS_PREFLIGHT.allowHeaders.join(','),
    'Access-Control-Allow-Origin': origin,
    ...(first === '*' ? {} : { Vary: 'Origin' }),
    'Access-Control-Allow-Methods': CORS_PREFLIGHT.allowMethods.join(','),
    'Access-Control-Max-Age': String(CORS_PREFLIGHT.maxAgeSeconds),
  };
}
