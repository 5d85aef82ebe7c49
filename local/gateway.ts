import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENV, optionalEnv } from '../functions/config';
import { parseAllowedOrigins } from '../functions/http/cors';
import {
  BODY_OVER_GATEWAY_LIMIT,
  CORS_PREFLIGHT,
  corsPreflightHeaders,
  type GatewayResponseType,
  HEADERS_OVER_GATEWAY_LIMIT,
  OUTSIDE_THE_STAGE,
  type UnshapedGatewayAnswer,
} from '../service/gateway-responses';
import { integrationRequestOutcome, MOCK_ANSWER_REQUEST } from '../service/integration-request';
import { API_STAGE_NAME } from '../service/routes';
import { AUTHORIZER_CACHE_TTL_SECONDS, type ThrottleSettings } from '../service/stage-limits';
import {
  gatewayAnswer,
  methodNotAllowedAnswer,
  type Outcome,
  sendAnswer,
  sendStreamed,
  unshapedAnswer,
} from './gateway/answers';
import { type Authorize, createAuthorizer } from './gateway/authorize';
import {
  defaultFunctionTimeoutMs,
  type Functions,
  type HandlerLoader,
  importHandler,
  invokeRoute,
} from './gateway/invoke';
import { type RouteMatch, routeRequest } from './gateway/routing';
import { LOCAL_METHOD_ARN_PREFIX } from './lambda/events';
import { createThrottle } from './throttle';

export { defaultFunctionTimeoutMs, importHandler } from './gateway/invoke';
export { matchPath, resourceOf } from './gateway/routing';

/** API Gateway's payload limit for a REST API ("Amazon API Gateway quotas"). */
const GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
/** API Gateway's limit on the total size of all header values of a REST API request ("Amazon API Gateway quotas"). */
export const GATEWAY_MAX_HEADER_VALUE_BYTES = 10_240;
/** Node's parser limit on the whole header section, kept above API Gateway's so that the gateway's check decides. */
const NODE_MAX_HEADER_BYTES = 64 * 1024;

/** Options of the local gateway. */
export interface LocalGatewayOptions {
  /** Seconds an authorizer result is reused for the same token, as the stage's authorizer cache. @default 300 */
  authorizerCacheTtlSeconds?: number;
  /** The stage's throttling (rate and burst per method); `npm start` passes staging's. @default off */
  throttling?: ThrottleSettings;
  /** The clock of the throttling and of the authorizer cache's TTL, in milliseconds. @default performance.now */
  clock?: () => number;
  /**
   * Browser origins allowed by CORS: with any, OPTIONS is answered as the stage's unauthenticated preflight.
   * @default the CORS_ALLOWED_ORIGINS environment variable, as the functions read it
   */
  corsOrigins?: readonly string[];
  /** Receives one line per request: method, path, status, milliseconds. @default console.log */
  log?: (line: string) => void;
  /** Answers requests outside `/v1` (the docs page); false falls through to the 403 Forbidden outside the stage. */
  serveExtra?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
  /** Loads a handler module by name; tests may inject faults here. @default import from functions/handlers */
  loadHandler?: HandlerLoader;
  /** Each function's timeout in milliseconds, by module name. @default {@link defaultFunctionTimeoutMs} */
  functionTimeoutMs?: (name: string) => number;
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

/** What one request is answered with, shared by every request of a gateway. */
interface Stage {
  corsOrigins: readonly string[];
  functions: Functions;
  authorize: Authorize;
  allowRequest: ((apiMethod: string) => boolean) | undefined;
  serveExtra: LocalGatewayOptions['serveExtra'];
}

/** One request in flight. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  stage: Stage;
}

/**
 * Starts the local gateway: it answers `http://127.0.0.1:PORT/v1` the way the deployed API Gateway stage does,
 * running the real authorizer and handlers in this process over whatever DynamoDB the environment points at.
 */
export async function startLocalGateway(port: number, options: LocalGatewayOptions = {}): Promise<LocalGateway> {
  const now = options.clock ?? (() => performance.now());
  const functions: Functions = {
    load: options.loadHandler ?? importHandler,
    timeoutOf: options.functionTimeoutMs ?? defaultFunctionTimeoutMs,
  };
  const ttlMs = (options.authorizerCacheTtlSeconds ?? AUTHORIZER_CACHE_TTL_SECONDS) * 1000;
  const authorizer = createAuthorizer({ ...functions, ttlMs, now });
  const stage: Stage = {
    corsOrigins: options.corsOrigins ?? parseAllowedOrigins(optionalEnv(ENV.corsAllowedOrigins)),
    functions,
    authorize: authorizer.authorize,
    allowRequest: createThrottle(options.throttling, now),
    serveExtra: options.serveExtra,
  };
  const log = options.log ?? ((line: string) => console.log(line));
  // API Gateway's header limit is checked by the gateway itself (handle), under Node's own.
  const server = createServer({ maxHeaderSize: NODE_MAX_HEADER_BYTES }, (req, res) => {
    const started = performance.now();
    answerRequest({ req, res, requestId: randomUUID(), stage }).then((outcome) => {
      log(`${req.method} ${req.url} ${describeOutcome(outcome)} ${(performance.now() - started).toFixed(1)}ms`);
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolveListen());
  });
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/${API_STAGE_NAME}`,
    clearAuthorizerCache: authorizer.clear,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

function describeOutcome(outcome: Outcome): string {
  if (outcome === 'aborted') return '- (client went away)';
  if (outcome === 'stream aborted') return '200 (stream aborted by the function)';
  return String(outcome);
}

/**
 * Answers one request. What cannot be sent (a function's result that is no proxy result, or a defect of this
 * emulator, never the answer to client input) is the API_CONFIGURATION_ERROR response.
 */
async function answerRequest(exchange: Exchange): Promise<Outcome> {
  try {
    return await handle(exchange);
  } catch {
    const { res, requestId, stage } = exchange;
    if (res.headersSent) {
      res.destroy();
    } else {
      sendAnswer(exchange.req, res, gatewayAnswer('API_CONFIGURATION_ERROR', requestId, stage.corsOrigins));
    }
    return 500;
  }
}

function reply(exchange: Exchange, type: GatewayResponseType): number {
  return sendAnswer(exchange.req, exchange.res, gatewayAnswer(type, exchange.requestId, exchange.stage.corsOrigins));
}

/** Answers before reading the body (drained unread): a gateway response of `type`, or an unshaped answer. */
function refuse(exchange: Exchange, answer: GatewayResponseType | UnshapedGatewayAnswer): number {
  exchange.req.resume();
  if (typeof answer === 'string') return reply(exchange, answer);
  return sendAnswer(exchange.req, exchange.res, unshapedAnswer(answer));
}

/** The last value of a header, as API Gateway passes a repeated one on (the Authorization header's included). */
function lastHeaderValue(req: IncomingMessage, lowerCaseName: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if ((req.rawHeaders[i] as string).toLowerCase() === lowerCaseName) value = req.rawHeaders[i + 1];
  }
  return value;
}

function headerValueBytes(req: IncomingMessage): number {
  let bytes = 0;
  for (let i = 1; i < req.rawHeaders.length; i += 2) bytes += Buffer.byteLength(req.rawHeaders[i] as string);
  return bytes;
}

/**
 * The stage's MOCK methods (the preflight, the 404/405 answers) refuse a Content-Type they have no template for
 * (passthrough NEVER, service/integration-request.ts): API Gateway's UNSUPPORTED_MEDIA_TYPE.
 */
function mockRefusesBody(req: IncomingMessage): boolean {
  return integrationRequestOutcome(MOCK_ANSWER_REQUEST, lastHeaderValue(req, 'content-type')) === 'refused with 415';
}

async function handle(exchange: Exchange): Promise<Outcome> {
  const { req, res, stage } = exchange;
  // Every answer carries the request id, the docs page's included.
  res.setHeader('x-amzn-RequestId', exchange.requestId);
  if (headerValueBytes(req) > GATEWAY_MAX_HEADER_VALUE_BYTES) return refuse(exchange, HEADERS_OVER_GATEWAY_LIMIT);
  const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split(/\?(.*)/s);
  const stagePrefix = `/${API_STAGE_NAME}`;
  if (rawPath === stagePrefix || rawPath.startsWith(`${stagePrefix}/`)) {
    return answerOnStage(exchange, rawPath.slice(stagePrefix.length) || '/', rawQuery);
  }
  if (stage.serveExtra && (await stage.serveExtra(req, res))) return res.statusCode;
  return refuse(exchange, OUTSIDE_THE_STAGE);
}

/** A request under `/v1`: throttled, preflighted, authorized, then routed to its function or a mock. */
async function answerOnStage(exchange: Exchange, stagePath: string, rawQuery: string): Promise<Outcome> {
  const { req, res, stage } = exchange;
  const method = req.method ?? 'GET';
  const preflight = method === 'OPTIONS' && stage.corsOrigins.length > 0;
  const match = routeRequest(method, stagePath, preflight);
  if (stage.allowRequest && !stage.allowRequest(match.apiMethod)) return refuse(exchange, 'THROTTLED');
  if (preflight) return answerPreflight(exchange);
  const body = await readBody(req);
  if (body === 'aborted') return 'aborted';
  if (body === 'too-large') return sendAnswer(req, res, unshapedAnswer(BODY_OVER_GATEWAY_LIMIT));
  // Every path under /v1 is behind the authorizer (the stage has an authorized catch-all), so 401 comes first.
  const methodArn = `${LOCAL_METHOD_ARN_PREFIX}/${method}${stagePath}`;
  const auth = await stage.authorize(lastHeaderValue(req, 'authorization'), methodArn);
  if (typeof auth === 'string') return reply(exchange, auth);
  if (!match.route) return answerMock(exchange, match, method);
  const request = { ...match, route: match.route, req, stagePath, rawQuery, body, auth };
  const answer = await invokeRoute({ ...request, requestId: exchange.requestId }, stage.functions);
  if (typeof answer === 'string') return reply(exchange, answer);
  return 'cookies' in answer ? sendStreamed(res, answer) : sendAnswer(req, res, answer);
}

/** The stage's preflight: a MOCK method without authorizer, no key, no function. */
function answerPreflight(exchange: Exchange): number {
  const { req, res, stage } = exchange;
  if (mockRefusesBody(req)) return refuse(exchange, 'UNSUPPORTED_MEDIA_TYPE');
  req.resume();
  res.writeHead(CORS_PREFLIGHT.status, corsPreflightHeaders(stage.corsOrigins, lastHeaderValue(req, 'origin')));
  res.end();
  return CORS_PREFLIGHT.status;
}

/** What no route takes is answered by the stage's 404/405 MOCK methods. */
function answerMock(exchange: Exchange, match: RouteMatch, method: string): number {
  if (mockRefusesBody(exchange.req)) return reply(exchange, 'UNSUPPORTED_MEDIA_TYPE');
  if (!match.otherMethod) return reply(exchange, 'MISSING_AUTHENTICATION_TOKEN');
  const answer = methodNotAllowedAnswer(match.otherMethod.path, method, exchange.stage.corsOrigins);
  return sendAnswer(exchange.req, exchange.res, answer);
}

/** Reads the whole body; past API Gateway's limit it is drained and dropped. 'aborted' if the client went away. */
async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large' | 'aborted'> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= GATEWAY_MAX_PAYLOAD_BYTES) chunks.push(chunk);
    }
  } catch {
    return 'aborted';
  }
  return size > GATEWAY_MAX_PAYLOAD_BYTES ? 'too-large' : Buffer.concat(chunks);
}
