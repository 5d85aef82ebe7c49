import type { APIGatewayProxyEvent } from 'aws-lambda';
import { API_STAGE_NAME } from '../../service/routes';

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
