import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { apiGatewayProxyEvent, type ProxyEventOverrides } from '../../functions/http/proxy-event';
import { API_STAGE_NAME } from '../../service/routes';

export { apiGatewayProxyEvent, type ProxyEventOverrides };

/** The method ARN prefix of the local API (account, region and API id as events carry them outside AWS). */
export const LOCAL_METHOD_ARN_PREFIX = `arn:aws:execute-api:us-east-1:123456789012:local/${API_STAGE_NAME}`;

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
