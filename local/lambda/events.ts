import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { API_STAGE_NAME } from '../../service/routes';

/** The account, region and API id events carry outside AWS (the local gateway, tests, the benchmark). */
export const LOCAL_ACCOUNT = '123456789012';
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_API_ID = 'local';

/**
 * The caller's identity as a REST API with a Lambda authorizer fills it: the source address and user agent, every
 * IAM, Cognito and API-key member null ("Lambda proxy integrations in API Gateway", input format,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html).
 */
export function callerIdentity(
  sourceIp: string,
  userAgent: string | null,
): APIGatewayProxyEvent['requestContext']['identity'] {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `$context.requestTime` as API Gateway writes it (CLF format, UTC): `26/Nov/2026:03:05:20 +0000`. */
export function requestTime(at: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${two(at.getUTCDate())}/${MONTHS[at.getUTCMonth()]}/${at.getUTCFullYear()}:` +
    `${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())} +0000`
  );
}

/** Overrides of {@link apiGatewayProxyEvent}; `requestContext` members are merged over the defaults. */
export type ProxyEventOverrides = Partial<Omit<APIGatewayProxyEvent, 'requestContext'>> & {
  requestContext?: Partial<APIGatewayProxyEvent['requestContext']>;
};

/**
 * A REST API Lambda proxy event as API Gateway sends it (payload format 1.0), `GET /inventory` unless overridden.
 * The local gateway builds every event it sends through this, so tests and the benchmark use the same shape.
 */
export function apiGatewayProxyEvent(overrides: ProxyEventOverrides = {}): APIGatewayProxyEvent {
  const { requestContext, ...rest } = overrides;
  const resource = rest.resource ?? '/inventory';
  const path = rest.path ?? '/inventory';
  const httpMethod = rest.httpMethod ?? 'GET';
  const now = new Date();
  return {
    resource,
    path,
    httpMethod,
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    ...rest,
    requestContext: {
      accountId: LOCAL_ACCOUNT,
      apiId: LOCAL_API_ID,
      authorizer: { principalId: 'key_local', keyId: 'key_local' },
      protocol: 'HTTP/1.1',
      httpMethod,
      identity: callerIdentity('127.0.0.1', null),
      path: `/${API_STAGE_NAME}${path}`,
      stage: API_STAGE_NAME,
      requestId: 'req-local',
      extendedRequestId: 'req-local-extended',
      domainName: `${LOCAL_API_ID}.execute-api.${LOCAL_REGION}.amazonaws.com`,
      domainPrefix: LOCAL_API_ID,
      requestTime: requestTime(now),
      requestTimeEpoch: now.getTime(),
      resourceId: resource,
      resourcePath: resource,
      ...requestContext,
    },
  };
}

/** The proxy event of `PATCH /inventory/{petId}` with a JSON body, as API Gateway sends it. */
export function inventoryUpdateEvent(
  petId: string,
  body: string,
  overrides: ProxyEventOverrides = {},
): APIGatewayProxyEvent {
  return apiGatewayProxyEvent({
    resource: '/inventory/{petId}',
    path: `/inventory/${petId}`,
    httpMethod: 'PATCH',
    headers: { 'Content-Type': 'application/json' },
    pathParameters: { petId },
    body,
    ...overrides,
  });
}

/** A TOKEN authorizer event for `Authorization: <header>` on a method of the local API. */
export function tokenAuthorizerEvent(
  authorizationToken: string,
  methodArn = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${LOCAL_API_ID}/${API_STAGE_NAME}/GET/inventory`,
): APIGatewayTokenAuthorizerEvent {
  return { type: 'TOKEN', authorizationToken, methodArn };
}

/** A Lambda context as the runtime passes it, with a deadline `timeoutMs` from now. */
export function lambdaContext(
  options: { functionName?: string; requestId?: string; timeoutMs?: number; memoryMb?: number } = {},
): Context {
  const functionName = options.functionName ?? 'local';
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: String(options.memoryMb ?? 256),
    awsRequestId: options.requestId ?? 'lambda-req-local',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
