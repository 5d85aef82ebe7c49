import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { ENV, optionalEnv } from '../functions/config';
import { parseAllowedOrigins } from '../functions/http/cors';
import {
  BODY_OVER_GATEWAY_LIMIT,
  CORS_PREFLIGHT,
  corsPreflightHeaders,
  type GatewayResponseType,
  OUTSIDE_THE_STAGE,
} from '../service/gateway-responses';
import { API_STAGE_NAME } from '../service/routes';
import { AUTHORIZER_CACHE_TTL_SECONDS, type ThrottleSettings } from '../service/stage-limits';
import { gatewayAnswer, methodNotAllowedAnswer, sendAnswer, sendStreamed, unshapedAnswer } from './gateway/answers';
import { type Authorize, createAuthorizer } from './gateway/authorize';
import {
  defaultFunctionTimeoutMs,
  type Functions,
  type HandlerLoader,
  importHandler,
  invokeRoute,
} from './gateway/invoke';
import { routeRequest } from './gateway/routing';
import { LOCAL_METHOD_ARN_PREFIX } from './lambda/events';
import type { StreamedHttpResponse } from './lambda/streaming';
import { createThrottle } from './throttle';

export { defaultFunctionTimeoutMs, importHandler } from './gateway/invoke';
export { routeRequest } from './gateway/routing';

/** API Gateway's payload limit for a REST API ("Amazon API Gateway quotas"). */
const GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

export interface LocalGatewayOptions {
  /** Seconds an authorizer result is reused for the same token, as the stage's authorizer cache. @default 300 */
  authorizerCacheTtlSeconds?: number;
  /** The stage's throttling (rate and burst per method); `npm start` passes staging's. @default off */
  throttling?: ThrottleSettings;
  /** The clock of the throttling and of the authorizer cache's TTL, in milliseconds. @default performance.now */
  clock?: () => number;
  /** Browser origins allowed by CORS; with any, OPTIONS is the stage's preflight. @default CORS_ALLOWED_ORIGINS */
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

export interface LocalGateway {
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

/** One request in flight, and how to answer it with one of the stage's gateway responses. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  stage: Stage;
  reply(type: GatewayResponseType): void;
}

/** Answers `http://127.0.0.1:PORT/v1` as the stage does, with the real authorizer and handlers in this process. */
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
  const server = createServer((req, res) => {
    const started = performance.now();
    res.once('close', () => {
      const status = res.writableFinished ? res.statusCode : `${res.headersSent ? res.statusCode : '-'} (cut off)`;
      log(`${req.method} ${req.url} ${status} ${(performance.now() - started).toFixed(1)}ms`);
    });
    const requestId = randomUUID();
    const reply = (type: GatewayResponseType) => sendAnswer(res, gatewayAnswer(type, requestId, stage.corsOrigins));
    void answerRequest({ req, res, requestId, stage, reply });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/${API_STAGE_NAME}`,
    clearAuthorizerCache: authorizer.clear,
    close: async () => {
      // A streamed answer's connection is never idle: close it too.
      server.closeAllConnections();
      // A second signal while stopping closes again: that one has nothing left to do.
      if (server.listening) await server[Symbol.asyncDispose]();
    },
  };
}

// What cannot be sent (a result that is no proxy result, a defect here) is the API_CONFIGURATION_ERROR response.
async function answerRequest(exchange: Exchange): Promise<void> {
  const { req, res } = exchange;
  try {
    // Every answer carries the request id, the docs page's included.
    res.setHeader('x-amzn-RequestId', exchange.requestId);
    const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split(/\?(.*)/s);
    const stagePrefix = `/${API_STAGE_NAME}`;
    if (rawPath === stagePrefix || rawPath.startsWith(`${stagePrefix}/`)) {
      await answerOnStage(exchange, rawPath.slice(stagePrefix.length) || '/', rawQuery);
    } else if (!(await exchange.stage.serveExtra?.(req, res))) {
      req.resume();
      sendAnswer(res, unshapedAnswer(OUTSIDE_THE_STAGE));
    }
  } catch {
    if (res.headersSent) res.destroy();
    else exchange.reply('API_CONFIGURATION_ERROR');
  }
}

/** A request under `/v1`: throttled, preflighted, authorized, then routed to its function or a mock. */
async function answerOnStage(exchange: Exchange, stagePath: string, rawQuery: string): Promise<void> {
  const { req, res, stage } = exchange;
  const method = req.method ?? 'GET';
  const preflight = method === 'OPTIONS' && stage.corsOrigins.length > 0;
  const match = routeRequest(method, stagePath, preflight);
  if (stage.allowRequest && !stage.allowRequest(match.apiMethod)) {
    req.resume();
    return exchange.reply('THROTTLED');
  }
  if (preflight) {
    // The stage's preflight: a MOCK method without authorizer, no key, no function.
    req.resume();
    res.writeHead(CORS_PREFLIGHT.status, corsPreflightHeaders(stage.corsOrigins, req.headers.origin));
    return void res.end();
  }
  const body = await readBody(req);
  if (body === 'aborted') return;
  if (body === 'too-large') return sendAnswer(res, unshapedAnswer(BODY_OVER_GATEWAY_LIMIT));
  // Every path under /v1 is behind the authorizer (the stage has an authorized catch-all), so 401 comes first.
  const auth = await stage.authorize(req.headers.authorization, `${LOCAL_METHOD_ARN_PREFIX}/${method}${stagePath}`);
  if (typeof auth === 'string') return exchange.reply(auth);
  const { route, resourcePath, pathParameters } = match;
  if (!route) {
    // What no route takes is answered by the stage's 404/405 MOCK methods.
    if (!resourcePath) return exchange.reply('MISSING_AUTHENTICATION_TOKEN');
    return sendAnswer(res, methodNotAllowedAnswer(resourcePath, method, stage.corsOrigins));
  }
  const request = { route, pathParameters, req, stagePath, rawQuery, body, auth, requestId: exchange.requestId };
  const answer = await invokeRoute(request, stage.functions);
  if (typeof answer === 'string') return exchange.reply(answer);
  if (isStreamed(answer)) return sendStreamed(res, answer);
  sendAnswer(res, answer);
}

const isStreamed = (answer: APIGatewayProxyResult | StreamedHttpResponse): answer is StreamedHttpResponse =>
  answer.body instanceof Readable;

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
