import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { BEARER_VALIDATION_REGEX } from '../../functions/api-keys/key';
import { COMMON_HEADERS, errorBody } from '../../functions/http/responses';
import { API_STAGE_NAME, AUTHORIZER_HANDLER, allowedMethods, ROUTES, type Route } from '../../functions/routes';
import { gatewayResponse } from '../gateway-responses';
import { policyAllows } from './policy';

/** API Gateway's own payload limit (10 MB); the update handler enforces its much smaller one itself. */
const GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const LOCAL_ACCOUNT = '123456789012';
const LOCAL_REGION = 'us-east-1';
const LOCAL_API_ID = 'local';
const HANDLERS_DIR = join(import.meta.dirname, '..', '..', 'functions', 'handlers');

type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

/** Options of the local gateway. */
export interface LocalGatewayOptions {
  /** Seconds an authorizer result is reused for the same token, as the stage's authorizer cache. @default 300 */
  authorizerCacheTtlSeconds?: number;
  /** Receives one line per request: method, path, status, milliseconds. @default console.log */
  log?: (line: string) => void;
  /** Answers requests outside `/v1` (the docs page); returns false to fall through to 404. */
  serveExtra?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
  /** Loads a handler module by name; tests may inject faults here. @default import from functions/handlers */
  loadHandler?: (name: string) => Promise<LambdaHandler<unknown, unknown>>;
}

/** A running local gateway. */
export interface LocalGateway {
  server: Server;
  /** Base URL ending in `/v1`. */
  url: string;
  /** Forgets every cached authorizer result (as a redeploy of the stage would). */
  clearAuthorizerCache(): void;
  close(): Promise<void>;
}

interface CachedDecision {
  result: APIGatewayAuthorizerResult;
  expiresAt: number;
}

/** Response API Gateway itself would send, per `infra/gateway-responses.ts`. */
interface GatewayAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

function gatewayAnswer(type: string, requestId: string, extraHeaders: Record<string, string> = {}): GatewayAnswer {
  const spec = gatewayResponse(type);
  return {
    statusCode: spec.status,
    headers: { ...COMMON_HEADERS, ...spec.headers, ...extraHeaders },
    body: errorBody(spec.code, spec.message.replaceAll('{requestId}', requestId)),
  };
}

/** Matches a path (raw segments after `/v1`) against a route path; returns decoded path parameters. */
export function matchPath(pattern: string, rawSegments: readonly string[]): Record<string, string> | undefined {
  const parts = pattern.split('/').filter(Boolean);
  if (parts.length !== rawSegments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const raw = rawSegments[i] as string;
    if (part.startsWith('{') && part.endsWith('}')) {
      if (raw.length === 0) return undefined;
      params[part.slice(1, -1)] = safeDecode(raw);
    } else if (safeDecode(raw) !== part) {
      return undefined;
    }
  }
  return params;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function lambdaContext(functionName: string, requestId: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

const loadedHandlers = new Map<string, Promise<LambdaHandler<unknown, unknown>>>();

/** Imports a handler module by the route table's name: the very modules the stack bundles. */
export function importHandler(name: string): Promise<LambdaHandler<unknown, unknown>> {
  let loading = loadedHandlers.get(name);
  if (!loading) {
    loading = import(pathToFileURL(join(HANDLERS_DIR, `${name}.ts`)).href).then((mod: { handler?: unknown }) => {
      if (typeof mod.handler !== 'function') throw new Error(`functions/handlers/${name} exports no handler`);
      return mod.handler as LambdaHandler<unknown, unknown>;
    });
    loadedHandlers.set(name, loading);
  }
  return loading;
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > GATEWAY_MAX_PAYLOAD_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolveBody(tooLarge ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function singleValueHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    headers[name] = req.rawHeaders[i + 1] as string; // API Gateway keeps the last value of a repeated header.
  }
  return headers;
}

function lastHeaderValue(req: IncomingMessage, lowerCaseName: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if ((req.rawHeaders[i] as string).toLowerCase() === lowerCaseName) value = req.rawHeaders[i + 1];
  }
  return value;
}

function multiValueHeaders(req: IncomingMessage): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    headers[name] = [...(headers[name] ?? []), req.rawHeaders[i + 1] as string];
  }
  return headers;
}

function queryParameters(url: URL): { single: Record<string, string> | null; multi: Record<string, string[]> | null } {
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [key, value] of url.searchParams) {
    single[key] = value;
    multi[key] = [...(multi[key] ?? []), value];
  }
  return Object.keys(single).length === 0 ? { single: null, multi: null } : { single, multi };
}

/**
 * Starts the local gateway: it answers `http://127.0.0.1:PORT/v1` the way the deployed API Gateway stage does,
 * running the real authorizer and handlers in this process over whatever DynamoDB the environment points at.
 */
export async function startLocalGateway(port: number, options: LocalGatewayOptions = {}): Promise<LocalGateway> {
  const ttlMs = (options.authorizerCacheTtlSeconds ?? 300) * 1000;
  const log = options.log ?? ((line: string) => console.log(line));
  const load = options.loadHandler ?? importHandler;
  const authorizerCache = new Map<string, CachedDecision>();
  const validation = new RegExp(BEARER_VALIDATION_REGEX);

  async function authorizeRequest(
    authorization: string | undefined,
    methodArn: string,
    requestId: string,
  ): Promise<GatewayAnswer | APIGatewayAuthorizerResult> {
    if (authorization === undefined || !validation.test(authorization)) return gatewayAnswer('UNAUTHORIZED', requestId);
    const cached = authorizerCache.get(authorization);
    let result: APIGatewayAuthorizerResult;
    if (cached && cached.expiresAt > Date.now()) {
      result = cached.result;
    } else {
      const event: APIGatewayTokenAuthorizerEvent = { type: 'TOKEN', authorizationToken: authorization, methodArn };
      try {
        const authorizer = (await load(AUTHORIZER_HANDLER)) as LambdaHandler<
          APIGatewayTokenAuthorizerEvent,
          APIGatewayAuthorizerResult
        >;
        result = await authorizer(event, lambdaContext('authorizer', randomUUID(), 10_000));
      } catch (error) {
        if (error instanceof Error && error.message === 'Unauthorized') return gatewayAnswer('UNAUTHORIZED', requestId);
        return gatewayAnswer('AUTHORIZER_FAILURE', requestId);
      }
      if (!result?.policyDocument || typeof result.principalId !== 'string') {
        return gatewayAnswer('AUTHORIZER_CONFIGURATION_ERROR', requestId);
      }
      if (ttlMs > 0) authorizerCache.set(authorization, { result, expiresAt: Date.now() + ttlMs });
    }
    return policyAllows(result, methodArn) ? result : gatewayAnswer('ACCESS_DENIED', requestId);
  }

  async function invokeRoute(
    route: Route,
    req: IncomingMessage,
    url: URL,
    body: Buffer,
    pathParameters: Record<string, string>,
    auth: APIGatewayAuthorizerResult,
    requestId: string,
    stagePath: string,
  ): Promise<GatewayAnswer | APIGatewayProxyResult> {
    const query = queryParameters(url);
    const now = Date.now();
    const event: APIGatewayProxyEvent = {
      resource: route.path,
      path: stagePath,
      httpMethod: route.method,
      headers: singleValueHeaders(req),
      multiValueHeaders: multiValueHeaders(req),
      queryStringParameters: query.single,
      multiValueQueryStringParameters: query.multi,
      pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
      stageVariables: null,
      body: body.length > 0 ? body.toString('utf8') : null,
      isBase64Encoded: false,
      requestContext: {
        accountId: LOCAL_ACCOUNT,
        apiId: LOCAL_API_ID,
        authorizer: { principalId: auth.principalId, ...auth.context, integrationLatency: 0 },
        protocol: `HTTP/${req.httpVersion}`,
        httpMethod: route.method,
        identity: {
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          userAgent: req.headers['user-agent'] ?? null,
        } as APIGatewayProxyEvent['requestContext']['identity'],
        path: `/${API_STAGE_NAME}${stagePath}`,
        stage: API_STAGE_NAME,
        requestId,
        requestTimeEpoch: now,
        resourceId: route.operationId,
        resourcePath: route.path,
      },
    };
    try {
      const handler = (await load(route.handler)) as LambdaHandler<APIGatewayProxyEvent, APIGatewayProxyResult>;
      const result = await handler(event, lambdaContext(route.operationId, randomUUID(), 29_000));
      if (!result || typeof result.statusCode !== 'number') return gatewayAnswer('DEFAULT_5XX', requestId);
      return result;
    } catch {
      // A function that throws is a Lambda error: API Gateway answers 502, which the stage maps to DEFAULT_5XX.
      return gatewayAnswer('DEFAULT_5XX', requestId);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const requestId = randomUUID();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
    const send = (answer: GatewayAnswer | APIGatewayProxyResult): number => {
      const headers: Record<string, string | string[]> = { 'x-amzn-RequestId': requestId };
      for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name] = String(value);
      for (const [name, values] of Object.entries(('multiValueHeaders' in answer && answer.multiValueHeaders) || {})) {
        headers[name] = values.map(String);
      }
      const payload =
        'isBase64Encoded' in answer && answer.isBase64Encoded
          ? Buffer.from(answer.body, 'base64')
          : Buffer.from(answer.body ?? '', 'utf8');
      headers['Content-Length'] = String(payload.length);
      res.writeHead(answer.statusCode, headers);
      res.end(req.method === 'HEAD' ? undefined : payload);
      return answer.statusCode;
    };

    const stagePrefix = `/${API_STAGE_NAME}`;
    if (rawPath !== stagePrefix && !rawPath.startsWith(`${stagePrefix}/`)) {
      if (options.serveExtra && (await options.serveExtra(req, res))) return res.statusCode;
      req.resume();
      return send(gatewayAnswer('MISSING_AUTHENTICATION_TOKEN', requestId));
    }
    const body = await readBody(req);
    if (body === 'too-large') return send(gatewayAnswer('REQUEST_TOO_LARGE', requestId));

    const stagePath = rawPath.slice(stagePrefix.length) || '/';
    const rawSegments = stagePath.split('/').slice(1);
    const method = req.method ?? 'GET';
    const methodArn = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${LOCAL_API_ID}/${API_STAGE_NAME}/${method}${stagePath}`;

    // Every path under /v1 is behind the authorizer (the stage has an authorized catch-all), so 401 comes first.
    // The TOKEN identity source is the Authorization header whatever its case; of repeated ones, the last.
    const auth = await authorizeRequest(lastHeaderValue(req, 'authorization'), methodArn, requestId);
    if ('statusCode' in auth) return send(auth);

    const matches = ROUTES.map((route) => ({ route, params: matchPath(route.path, rawSegments) })).filter(
      (m) => m.params,
    );
    const match = matches.find((m) => m.route.method === method);
    if (match?.params)
      return send(await invokeRoute(match.route, req, url, body, match.params, auth, requestId, stagePath));
    const first = matches[0];
    if (first) {
      const allow = allowedMethods(first.route.path).join(', ');
      return send({
        statusCode: 405,
        headers: { ...COMMON_HEADERS, Allow: allow },
        body: errorBody('METHOD_NOT_ALLOWED', `${method} is not allowed on ${first.route.path}; allowed: ${allow}.`),
      });
    }
    return send(gatewayAnswer('MISSING_AUTHENTICATION_TOKEN', requestId));
  }

  const server = createServer((req, res) => {
    const started = process.hrtime.bigint();
    handle(req, res)
      .catch(() => {
        if (!res.headersSent) {
          res.writeHead(500, { ...COMMON_HEADERS });
          res.end(errorBody('INTERNAL', 'An internal error occurred in the local gateway.'));
        }
        return 500;
      })
      .then((status) => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        log(`${req.method} ${req.url} ${status} ${ms.toFixed(1)}ms`);
      });
  });
  // Requests Node's HTTP parser refuses (malformed framing, oversized headers) still get the Error body, as
  // API Gateway's DEFAULT_4XX response would give them.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const answer = gatewayAnswer('DEFAULT_4XX', randomUUID());
    const payload = Buffer.from(answer.body, 'utf8');
    const head = Object.entries({ ...answer.headers, 'Content-Length': String(payload.length), Connection: 'close' })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.end(`HTTP/1.1 ${answer.statusCode} Bad Request\r\n${head}\r\n\r\n${answer.body}`);
    log(`- - ${answer.statusCode} 0.0ms (${error.code ?? 'malformed request'})`);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolveListen());
  });
  const actualPort = (server.address() as AddressInfo).port;
  return {
    server,
    url: `http://127.0.0.1:${actualPort}/${API_STAGE_NAME}`,
    clearAuthorizerCache: () => authorizerCache.clear(),
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}
