import type { IncomingMessage } from 'node:http';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent } from 'aws-lambda';
import { apiGatewayProxyEvent } from '../../functions/http/proxy-event';
import type { Route } from '../../service/routes';

/** What the route's function is invoked with. */
export interface RouteRequest {
  route: Route;
  pathParameters: Record<string, string>;
  req: IncomingMessage;
  stagePath: string;
  rawQuery: string;
  body: Buffer;
  auth: APIGatewayAuthorizerResult;
  requestId: string;
}

export function proxyEvent(request: RouteRequest): APIGatewayProxyEvent {
  const { route, req, auth } = request;
  const rawHeaders = req.rawHeaders;
  const headers = valueMaps(
    Array.from({ length: rawHeaders.length / 2 }, (_, i) => rawHeaders.slice(2 * i, 2 * i + 2)),
  );
  const query = valueMaps([...new URLSearchParams(request.rawQuery)]);
  return apiGatewayProxyEvent({
    resource: route.path,
    path: request.stagePath,
    httpMethod: route.method,
    headers: headers.last ?? {},
    multiValueHeaders: headers.all ?? {},
    queryStringParameters: query.last,
    multiValueQueryStringParameters: query.all,
    pathParameters: Object.keys(request.pathParameters).length > 0 ? request.pathParameters : null,
    body: request.body.length > 0 ? request.body.toString('utf8') : null,
    requestContext: {
      authorizer: { principalId: auth.principalId, ...auth.context },
      requestId: request.requestId,
      resourceId: route.operationId,
    },
  });
}

// The last value of each name and every value in order (null when none), in prototype-less objects so that a name
// such as `__proto__` is one like any other.
function valueMaps(pairs: readonly (readonly string[])[]) {
  if (pairs.length === 0) return { last: null, all: null };
  const last: Record<string, string> = Object.create(null);
  const all: Record<string, string[]> = Object.create(null);
  for (const [name = '', value = ''] of pairs) {
    last[name] = value;
    all[name] = [...(all[name] ?? []), value];
  }
  return { last, all };
}
