import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { API_STAGE_NAME } from '../../service/routes';

/** The method ARN prefix of the local API (account, region and API id as events carry them outside AWS). */
export const LOCAL_METHOD_ARN_PREFIX = `arn:aws:execute-api:us-east-1:123456789012:local/${API_STAGE_NAME}`;

/** Overrides of {@link apiGatewayProxyEvent}; `requestContext` members are merged over the defaults. */
export type ProxyEventOverrides = Partial<Omit<APIGatewayProxyEvent, 'requestContext'>> & {
  requestContext?: Partial<APIGatewayProxyEvent['requestContext']>;
};

/** A REST API Lambda proxy event, `GET /inventory` unless overridden; it leaves out the request context members no
 * function reads (identity, domain). */
export function apiGatewayProxyEvent(overrides: ProxyEventOverrides = {}): APIGatewayProxyEvent {
  const { requestContext, ...rest } = overrides;
  const resource = rest.resource ?? '/inventory';
  const path = rest.path ?? '/inventory';
  const httpMethod = rest.httpMethod ?? 'GET';
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
      authorizer: { principalId: 'key_local', keyId: 'key_local' },
      httpMethod,
      path: `/${API_STAGE_NAME}${path}`,
      stage: API_STAGE_NAME,
      requestId: 'req-local',
      requestTimeEpoch: Date.now(),
      resourcePath: resource,
      ...requestContext,
    } as APIGatewayProxyEvent['requestContext'],
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
  methodArn = `${LOCAL_METHOD_ARN_PREFIX}/GET/inventory`,
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
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
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
