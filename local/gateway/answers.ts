import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { COMMON_HEADERS } from '../../service/common-headers';
import {
  errorTemplate,
  type GatewayResponseType,
  gatewayCorsHeaders,
  gatewayResponse,
  gatewayResponseHeaders,
  methodNotAllowedMessage,
  renderTemplate,
  type UnshapedGatewayAnswer,
} from '../../service/gateway-responses';
import { allowedMethods } from '../../service/routes';
import type { StreamedHttpResponse } from '../lambda/streaming';

/** An answer no gateway response shapes: as API Gateway sends it, without CORS. */
export function unshapedAnswer(unshaped: UnshapedGatewayAnswer): APIGatewayProxyResult {
  return { statusCode: unshaped.status, headers: { ...unshaped.headers }, body: unshaped.body };
}

/** Renders the stage's gateway response template of `type` for one request, as API Gateway itself would answer. */
export function gatewayAnswer(
  type: GatewayResponseType,
  requestId: string,
  corsOrigins: readonly string[],
): APIGatewayProxyResult {
  const spec = gatewayResponse(type);
  return {
    statusCode: spec.status,
    headers: gatewayResponseHeaders(spec, corsOrigins),
    body: renderTemplate(errorTemplate(spec.code, spec.message), { requestId, 'error.responseType': type }),
  };
}

/** The stage's 405 MOCK answer for a path that has routes, none of them under `method`. */
export function methodNotAllowedAnswer(
  path: string,
  method: string,
  corsOrigins: readonly string[],
): APIGatewayProxyResult {
  const allow = allowedMethods(path).join(', ');
  return {
    statusCode: 405,
    headers: { ...COMMON_HEADERS, ...gatewayCorsHeaders(corsOrigins), Allow: allow },
    body: renderTemplate(errorTemplate('METHOD_NOT_ALLOWED', methodNotAllowedMessage(path, allow)), {
      httpMethod: method,
    }),
  };
}

/** A base64 body goes out as text: the stage has no binaryMediaTypes to decode it for ("Binary media types for
 * REST APIs in API Gateway"). Node sends no body to HEAD. */
export function sendAnswer(res: ServerResponse, reply: APIGatewayProxyResult): void {
  const payload = Buffer.from(reply.body ?? '', 'utf8');
  const headers = Object.entries(reply.headers ?? {}).map(([name, value]) => [name, String(value)]);
  res.writeHead(reply.statusCode, { ...Object.fromEntries(headers), 'Content-Length': payload.length });
  res.end(payload);
}

/** A function that fails after its prelude closes the connection without the terminating chunk: the client sees
 * an incomplete body, never a whole one. */
export function sendStreamed(res: ServerResponse, reply: StreamedHttpResponse): Promise<void> {
  res.writeHead(reply.statusCode, reply.headers);
  return pipeline(reply.body, res).catch(() => {
    res.destroy();
  });
}
