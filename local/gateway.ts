import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
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
import { BEARER_VALIDATION_REGEX } from '../functions/api-keys/key';
import { ENV, optionalEnv } from '../functions/config';
import { parseAllowedOrigins } from '../functions/http/cors';
import { LAMBDA_MAX_PAYLOAD_BYTES } from '../functions/http/responses';
import { COMMON_HEADERS } from '../service/common-headers';
import {
  apiResourcePaths,
  BODY_OVER_GATEWAY_LIMIT,
  CATCH_ALL_RESOURCE,
  CORS_PREFLIGHT,
  corsPreflightHeaders,
  errorTemplate,
  type GatewayResponseType,
  gatewayCorsHeaders,
  gatewayResponse,
  gatewayResponseHeaders,
  HEADERS_OVER_GATEWAY_LIMIT,
  methodNotAllowedMessage,
  OUTSIDE_THE_STAGE,
  renderTemplate,
  type UnshapedGatewayAnswer,
} from '../service/gateway-responses';
import { integrationRequestOutcome, MOCK_ANSWER_REQUEST } from '../service/integration-request';
import {
  API_STAGE_NAME,
  AUTHORIZER_HANDLER,
  AUTHORIZER_TIMEOUT_SECONDS,
  allowedMethods,
  DEFAULT_FUNCTION_TIMEOUT_SECONDS,
  ROUTES,
  type Route,
} from '../service/routes';
import { AUTHORIZER_CACHE_TTL_SECONDS, type ThrottleSettings } from '../service/stage-limits';
import {
  apiGatewayProxyEvent,
  callerIdentity,
  LOCAL_ACCOUNT,
  LOCAL_API_ID,
  LOCAL_REGION,
  lambdaContext,
  tokenAuthorizerEvent,
} from './lambda/events';
import {
  installLambdaStreamingRuntime,
  invokeStreamingHandler,
  isStreamingHandler,
  type StreamedHttpResponse,
} from './lambda/streaming';
import { policyAllows } from './policy';
import { createThrottle } from './throttle';

/** Authorizer decisions kept at most (the local cache is per gateway process). */
const AUTHORIZER_CACHE_MAX_ENTRIES = 10_000;
/** API Gateway's payload limit for a REST API ("Amazon API Gateway quotas"). */
const GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
/** API Gateway's limit on the total size of all header values of a REST API request ("Amazon API Gateway quotas"). */
export const GATEWAY_MAX_HEADER_VALUE_BYTES = 10_240;
/** Node's parser limit on the whole header section, kept above API Gateway's so that the gateway's check decides. */
const NODE_MAX_HEADER_BYTES = 64 * 1024;
const HANDLERS_DIR = join(import.meta.dirname, '..', 'functions', 'handlers');

type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

/** Options of the local gateway. */
export interface LocalGatewayOptions {
  /** Seconds an authorizer result is reused for the same token, as the stage's authorizer cache. @default 300 */
  authorizerCacheTtlSeconds?: number;
  /**
   * The stage's throttling (rate and burst per method); `npm start` passes staging's.
   * @default off: tests, load tests and the bench are never throttled unless they ask
   */
  throttling?: ThrottleSettings;
  /** The clock of the throttling and of the authorizer cache's TTL, in milliseconds; tests move it by hand. @default performance.now */
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
  loadHandler?: (name: string) => Promise<LambdaHandler<unknown, unknown>>;
  /**
   * Each function's timeout in milliseconds, by its module name (a route's `handler`, or the authorizer's); tests
   * shorten it. @default {@link defaultFunctionTimeoutMs}, the timeouts the stack sets
   */
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

interface CachedDecision {
  result: APIGatewayAuthorizerResult;
  expiresAt: number;
}

/** Response API Gateway itself would send, per `service/gateway-responses.ts`. */
interface GatewayAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** An answer no gateway response shapes (service/gateway-responses.ts): as API Gateway sends it, without CORS. */
function unshapedAnswer(unshaped: UnshapedGatewayAnswer): GatewayAnswer {
  return { statusCode: unshaped.status, headers: { ...unshaped.headers }, body: unshaped.body };
}

/** Renders the stage's gateway response template of `type` for one request, as API Gateway would. */
function gatewayAnswer(type: GatewayResponseType, requestId: string, corsOrigins: readonly string[]): GatewayAnswer {
  const spec = gatewayResponse(type);
  return {
    statusCode: spec.status,
    headers: gatewayResponseHeaders(spec, corsOrigins),
    body: renderTemplate(errorTemplate(spec.code, spec.message), { requestId, 'error.responseType': type }),
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

/**
 * A function's timeout as the stack sets it: the route's own, else DEFAULT_FUNCTION_TIMEOUT_SECONDS; the authorizer's
 * AUTHORIZER_TIMEOUT_SECONDS.
 */
export function defaultFunctionTimeoutMs(name: string): number {
  if (name === AUTHORIZER_HANDLER) return AUTHORIZER_TIMEOUT_SECONDS * 1000;
  const route = ROUTES.find((candidate) => candidate.handler === name);
  return (route?.timeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS) * 1000;
}

const TIMED_OUT = Symbol('timed out');

/**
 * Invokes a buffered function as Lambda does, up to its timeout: its result (or its error), or TIMED_OUT if it has
 * not returned by then. Its late result or error is dropped, as a stopped Lambda instance never delivers one.
 */
async function invokeWithin<T>(invoke: () => Promise<T>, timeoutMs: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<typeof TIMED_OUT>((resolveTimedOut) => {
    // Unref'd and cleared on return: a pending timeout never keeps the process (or a test run) alive.
    timer = setTimeout(resolveTimedOut, timeoutMs, TIMED_OUT).unref();
  });
  try {
    return await Promise.race([Promise.resolve().then(invoke), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

const RESOURCE_PATHS = apiResourcePaths();

/** The API Gateway resource a stage path (after `/v1`) resolves to: a route's, one of their prefixes, or the catch-all. */
export function resourceOf(stagePath: string): string {
  if (stagePath === '/') return '/';
  const rawSegments = stagePath.split('/').slice(1);
  return RESOURCE_PATHS.find((path) => path !== '/' && matchPath(path, rawSegments)) ?? CATCH_ALL_RESOURCE;
}

const loadedHandlers = new Map<string, Promise<LambdaHandler<unknown, unknown>>>();

/** Imports a handler module by the route table's name: the very modules the stack bundles. */
export function importHandler(name: string): Promise<LambdaHandler<unknown, unknown>> {
  let loading = loadedHandlers.get(name);
  if (!loading) {
    // As the Lambda runtime does before loading a function: a streaming handler reads `awslambda` at import.
    installLambdaStreamingRuntime();
    loading = import(pathToFileURL(join(HANDLERS_DIR, `${name}.ts`)).href).then((mod: { handler?: unknown }) => {
      if (typeof mod.handler !== 'function') throw new Error(`functions/handlers/${name} exports no handler`);
      return mod.handler as LambdaHandler<unknown, unknown>;
    });
    loadedHandlers.set(name, loading);
  }
  return loading;
}

/** Reads the whole body; past API Gateway's limit it is drained and dropped. 'aborted' if the client went away. */
function readBody(req: IncomingMessage): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolveBody) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (outcome: Buffer | 'too-large' | 'aborted') => {
      if (settled) return;
      settled = true;
      resolveBody(outcome);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= GATEWAY_MAX_PAYLOAD_BYTES) chunks.push(chunk);
    });
    req.on('end', () => settle(size > GATEWAY_MAX_PAYLOAD_BYTES ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', () => settle('aborted'));
    req.on('close', () => settle('aborted'));
  });
}

/** Header and query names are client input: they live in objects without a prototype, so `constructor` is a name. */
function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function singleValueHeaders(req: IncomingMessage): Record<string, string> {
  const headers = emptyRecord<string>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers[req.rawHeaders[i] as string] = req.rawHeaders[i + 1] as string; // API Gateway keeps the last value.
  }
  return headers;
}

function multiValueHeaders(req: IncomingMessage): Record<string, string[]> {
  const headers = emptyRecord<string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const values = headers[name] ?? [];
    values.push(req.rawHeaders[i + 1] as string);
    headers[name] = values;
  }
  return headers;
}

/**
 * The X-Forwarded-* headers a REST API adds to the request a function sees (the client's address, and the port and
 * protocol it connected on; "Lambda proxy integrations in API Gateway", input format example). A client's own
 * X-Forwarded-For is kept in front, as a proxy appends to it.
 */
function forwardedHeaders(req: IncomingMessage, sourceIp: string): Record<string, string> {
  const sent = lastHeaderValue(req, 'x-forwarded-for');
  return {
    'X-Forwarded-For': sent ? `${sent}, ${sourceIp}` : sourceIp,
    'X-Forwarded-Port': String(req.socket.localPort ?? ''),
    'X-Forwarded-Proto': 'http',
  };
}

/** The request's headers with the gateway's X-Forwarded-* in place of any the client sent under those names. */
function withForwarded<T>(
  headers: Record<string, T>,
  forwarded: Record<string, string>,
  wrap: (value: string) => T,
): Record<string, T> {
  const replaced = new Set(Object.keys(forwarded).map((name) => name.toLowerCase()));
  for (const name of Object.keys(headers)) if (replaced.has(name.toLowerCase())) delete headers[name];
  for (const [name, value] of Object.entries(forwarded)) headers[name] = wrap(value);
  return headers;
}

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

function queryParameters(rawQuery: string): {
  single: Record<string, string> | null;
  multi: Record<string, string[]> | null;
} {
  const single = emptyRecord<string>();
  const multi = emptyRecord<string[]>();
  let any = false;
  // "The semicolon character (;) is not supported for any request URL query string and results in the data being
  // split" (Amazon API Gateway important notes, REST APIs): a literal `;` separates parameters as `&` does.
  for (const [key, value] of new URLSearchParams(rawQuery.replaceAll(';', '&'))) {
    any = true;
    single[key] = value;
    const values = multi[key] ?? [];
    values.push(value);
    multi[key] = values;
  }
  return any ? { single, multi } : { single: null, multi: null };
}

/**
 * What Lambda hands over: the value serialized to JSON and parsed again in the function's runtime, with its size.
 * Undefined when it cannot be serialized.
 */
function throughLambda<T>(value: T): { value: T; bytes: number } | undefined {
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) return undefined;
  return { value: JSON.parse(json) as T, bytes: Buffer.byteLength(json) };
}

function isProxyResult(result: unknown): result is APIGatewayProxyResult {
  if (result === null || typeof result !== 'object') return false;
  const { statusCode, body } = result as { statusCode?: unknown; body?: unknown };
  return (
    Number.isInteger(statusCode) &&
    (statusCode as number) >= 100 &&
    (statusCode as number) <= 599 &&
    (body === undefined || body === null || typeof body === 'string')
  );
}

/**
 * An authorizer's context as the function behind it receives it: "The returned values are all stringified", and
 * a value may be a string, a number or a boolean, "you cannot set a JSON object or array as a valid value of any
 * key in the context map" ("Output from an API Gateway Lambda authorizer",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-output.html). What
 * the stage answers to such a value is not documented; here it is the authorizer's misconfiguration (500 type,
 * AUTHORIZER_CONFIGURATION_ERROR), as for any other output API Gateway cannot use.
 */
export function stringifiedContext(context: unknown): Record<string, string> | undefined | 'invalid' {
  if (context === undefined || context === null) return undefined;
  if (typeof context !== 'object' || Array.isArray(context)) return 'invalid';
  const values = emptyRecord<string>();
  for (const [key, value] of Object.entries(context)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return 'invalid';
    values[key] = String(value);
  }
  return values;
}

/** Above this body length the serialized result is measured against Lambda's response limit. */
const RESPONSE_SIZE_CHECK_FROM = 1024 * 1024;

/**
 * Starts the local gateway: it answers `http://127.0.0.1:PORT/v1` the way the deployed API Gateway stage does,
 * running the real authorizer and handlers in this process over whatever DynamoDB the environment points at.
 */
export async function startLocalGateway(port: number, options: LocalGatewayOptions = {}): Promise<LocalGateway> {
  const ttlMs = (options.authorizerCacheTtlSeconds ?? AUTHORIZER_CACHE_TTL_SECONDS) * 1000;
  const log = options.log ?? ((line: string) => console.log(line));
  const load = options.loadHandler ?? importHandler;
  const timeoutOf = options.functionTimeoutMs ?? defaultFunctionTimeoutMs;
  const corsOrigins = options.corsOrigins ?? parseAllowedOrigins(optionalEnv(ENV.corsAllowedOrigins));
  const now = options.clock ?? (() => performance.now());
  const allowRequest = createThrottle(options.throttling, now);
  const authorizerCache = new Map<string, CachedDecision>();
  const validation = new RegExp(BEARER_VALIDATION_REGEX);
  const answer = (type: GatewayResponseType, requestId: string) => gatewayAnswer(type, requestId, corsOrigins);

  async function authorizeRequest(
    authorization: string | undefined,
    methodArn: string,
    requestId: string,
  ): Promise<GatewayAnswer | APIGatewayAuthorizerResult> {
    if (authorization === undefined || !validation.test(authorization)) return answer('UNAUTHORIZED', requestId);
    const cached = authorizerCache.get(authorization);
    if (cached && cached.expiresAt <= now()) authorizerCache.delete(authorization);
    let result: APIGatewayAuthorizerResult;
    if (cached && cached.expiresAt > now()) {
      result = cached.result;
    } else {
      const event = tokenAuthorizerEvent(authorization, methodArn);
      let returned: unknown;
      try {
        const authorizer = (await load(AUTHORIZER_HANDLER)) as LambdaHandler<APIGatewayTokenAuthorizerEvent, unknown>;
        const timeoutMs = timeoutOf(AUTHORIZER_HANDLER);
        const context = lambdaContext({ functionName: 'authorizer', requestId: randomUUID(), timeoutMs });
        returned = await invokeWithin(() => authorizer(event, context), timeoutMs);
      } catch (error) {
        if (error instanceof Error && error.message === 'Unauthorized') return answer('UNAUTHORIZED', requestId);
        // Any other error from a TOKEN authorizer is a 500 AuthorizerConfigurationException on a stage.
        return answer('AUTHORIZER_CONFIGURATION_ERROR', requestId);
      }
      // An authorizer Lambda stopped at its timeout is a function error like any but `Unauthorized`.
      if (returned === TIMED_OUT) return answer('AUTHORIZER_CONFIGURATION_ERROR', requestId);
      const received = throughLambda(returned)?.value as APIGatewayAuthorizerResult | undefined;
      if (!received?.policyDocument || typeof received.principalId !== 'string') {
        return answer('AUTHORIZER_CONFIGURATION_ERROR', requestId);
      }
      const context = stringifiedContext(received.context);
      if (context === 'invalid') return answer('AUTHORIZER_CONFIGURATION_ERROR', requestId);
      result = { ...received, ...(context === undefined ? {} : { context }) };
      if (ttlMs > 0) {
        // Bounded, oldest first: every distinct token (a fuzz run, a long session) would otherwise stay forever.
        if (authorizerCache.size >= AUTHORIZER_CACHE_MAX_ENTRIES) {
          const oldest = authorizerCache.keys().next().value;
          if (oldest !== undefined) authorizerCache.delete(oldest);
        }
        authorizerCache.set(authorization, { result, expiresAt: now() + ttlMs });
      }
    }
    return policyAllows(result, methodArn) ? result : answer('ACCESS_DENIED', requestId);
  }

  async function invokeRoute(
    route: Route,
    req: IncomingMessage,
    rawQuery: string,
    body: Buffer,
    pathParameters: Record<string, string>,
    auth: APIGatewayAuthorizerResult,
    requestId: string,
    stagePath: string,
  ): Promise<GatewayAnswer | APIGatewayProxyResult | StreamedHttpResponse> {
    const query = queryParameters(rawQuery);
    const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
    const host = lastHeaderValue(req, 'host') ?? `127.0.0.1:${req.socket.localPort}`;
    const forwarded = forwardedHeaders(req, sourceIp);
    const event = apiGatewayProxyEvent({
      resource: route.path,
      path: stagePath,
      httpMethod: route.method,
      headers: withForwarded(singleValueHeaders(req), forwarded, (value) => value),
      multiValueHeaders: withForwarded(multiValueHeaders(req), forwarded, (value) => [value]),
      queryStringParameters: query.single,
      multiValueQueryStringParameters: query.multi,
      pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
      body: body.length > 0 ? body.toString('utf8') : null,
      requestContext: {
        authorizer: { principalId: auth.principalId, ...auth.context, integrationLatency: 0 },
        protocol: `HTTP/${req.httpVersion}`,
        identity: callerIdentity(sourceIp, lastHeaderValue(req, 'user-agent') ?? null),
        requestId,
        // API Gateway's own id of the request, another than the one clients see (x-amzn-RequestId).
        extendedRequestId: `${requestId.slice(0, 8)}-extended`,
        domainName: host,
        domainPrefix: host.split('.')[0] ?? host,
        resourceId: route.operationId,
      },
    });
    // Lambda refuses an invocation whose event is over its payload limit; API Gateway reports the integration failed.
    const delivered = throughLambda(event) as { value: APIGatewayProxyEvent; bytes: number };
    if (delivered.bytes > LAMBDA_MAX_PAYLOAD_BYTES) return answer('INTEGRATION_FAILURE', requestId);
    // Only the function's timeout is enforced: the stack never sets it longer than the integration's (29 s buffered,
    // the function's own when streamed; test/infra/api.test.ts holds it to that), so INTEGRATION_TIMEOUT cannot occur.
    const timeoutMs = timeoutOf(route.handler);
    const context = lambdaContext({ functionName: route.operationId, requestId: randomUUID(), timeoutMs });
    let handler: LambdaHandler<APIGatewayProxyEvent, unknown>;
    try {
      handler = (await load(route.handler)) as LambdaHandler<APIGatewayProxyEvent, unknown>;
    } catch {
      return answer('INTEGRATION_FAILURE', requestId);
    }
    if (route.streaming) {
      // The STREAM integration invokes with InvokeWithResponseStream: no 6 MB limit on the answer, which passes on
      // from the prelude as it comes; a function that fails before its prelude is a failed integration.
      if (!isStreamingHandler(handler)) return answer('INTEGRATION_FAILURE', requestId);
      const invocation = invokeStreamingHandler(handler, delivered.value, context);
      // Lambda stops the function at its timeout, a function error: before the prelude the integration failed, after
      // it the response is cut off as for any failure (sendStreamed).
      const stopAtTimeout = () => invocation.stop(new Error(`Task timed out after ${timeoutMs} ms`));
      const timer = setTimeout(stopAtTimeout, timeoutMs).unref();
      invocation.completion.then(
        () => clearTimeout(timer),
        () => clearTimeout(timer),
      );
      try {
        return await invocation.response;
      } catch {
        return answer('INTEGRATION_FAILURE', requestId);
      }
    }
    let result: unknown;
    try {
      result = await invokeWithin(() => handler(delivered.value, context), timeoutMs);
    } catch {
      // A function that throws is a Lambda function error: the integration failed.
      return answer('INTEGRATION_FAILURE', requestId);
    }
    // So is one Lambda stops at its timeout ("Task timed out").
    if (result === TIMED_OUT) return answer('INTEGRATION_FAILURE', requestId);
    if (!isProxyResult(result)) return answer('API_CONFIGURATION_ERROR', requestId);
    // Lambda carries the result back serialized: over its payload limit the integration fails.
    if ((result.body?.length ?? 0) > RESPONSE_SIZE_CHECK_FROM) {
      if (Buffer.byteLength(JSON.stringify(result)) > LAMBDA_MAX_PAYLOAD_BYTES) {
        return answer('INTEGRATION_FAILURE', requestId);
      }
    }
    return result;
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
  ): Promise<number | 'aborted' | 'stream aborted'> {
    // Every answer carries the request id, the docs page's included.
    res.setHeader('x-amzn-RequestId', requestId);
    const target = req.url ?? '/';
    const queryAt = target.indexOf('?');
    const rawPath = queryAt < 0 ? target : target.slice(0, queryAt);
    const rawQuery = queryAt < 0 ? '' : target.slice(queryAt + 1);
    const send = (reply: GatewayAnswer | APIGatewayProxyResult): number => {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name] = String(value);
      for (const [name, values] of Object.entries(('multiValueHeaders' in reply && reply.multiValueHeaders) || {})) {
        headers[name] = values.map(String);
      }
      // A base64 body is decoded only for a media type in the API's binaryMediaTypes ("Binary media types for REST
      // APIs in API Gateway": a Lambda proxy function must base64-encode its response "You must also configure the
      // binaryMediaTypes"). The stage configures none (test/infra/api.test.ts), so the text goes out as it came.
      const payload = Buffer.from(reply.body ?? '', 'utf8');
      headers['Content-Length'] = String(payload.length);
      res.writeHead(reply.statusCode, headers);
      res.end(req.method === 'HEAD' ? undefined : payload);
      return reply.statusCode;
    };
    /**
     * A streamed answer as a stage sends it: the prelude's status and headers, then the body in chunks as the
     * function writes it. A function that fails after its prelude leaves the response cut off: the connection is
     * closed without the terminating chunk, so the client sees an incomplete body, never a whole one.
     */
    const sendStreamed = (reply: StreamedHttpResponse): Promise<number | 'aborted' | 'stream aborted'> => {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(reply.headers)) headers[name] = String(value);
      for (const [name, values] of Object.entries(reply.multiValueHeaders)) headers[name] = values.map(String);
      if (reply.cookies.length > 0) headers['Set-Cookie'] = reply.cookies;
      res.writeHead(reply.statusCode, headers);
      return new Promise((resolveSent) => {
        reply.body.once('error', () => {
          res.destroy();
          resolveSent('stream aborted');
        });
        res.once('close', () => {
          if (res.writableFinished) {
            resolveSent(reply.statusCode);
          } else {
            reply.body.destroy();
            resolveSent('aborted');
          }
        });
        reply.body.pipe(res);
      });
    };
    /** Answers before reading the body (drained unread): a gateway response of `type`, or an unshaped answer. */
    const refuse = (reply: GatewayResponseType | UnshapedGatewayAnswer): number => {
      req.resume();
      return send(typeof reply === 'string' ? answer(reply, requestId) : unshapedAnswer(reply));
    };

    // HTTP/1.1 requires Host (RFC 9112); Node's own check would answer without the Error body, so it is made here.
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
      return refuse('DEFAULT_4XX');
    }
    if (headerValueBytes(req) > GATEWAY_MAX_HEADER_VALUE_BYTES) return refuse(HEADERS_OVER_GATEWAY_LIMIT);

    const stagePrefix = `/${API_STAGE_NAME}`;
    if (rawPath !== stagePrefix && !rawPath.startsWith(`${stagePrefix}/`)) {
      if (options.serveExtra && (await options.serveExtra(req, res))) return res.statusCode;
      return refuse(OUTSIDE_THE_STAGE);
    }
    const stagePath = rawPath.slice(stagePrefix.length) || '/';
    const rawSegments = stagePath.split('/').slice(1);
    const method = req.method ?? 'GET';
    const matches = ROUTES.map((route) => ({ route, params: matchPath(route.path, rawSegments) })).filter(
      (m) => m.params,
    );
    const match = matches.find((m) => m.route.method === method);
    const resource = resourceOf(stagePath);
    const preflight = method === 'OPTIONS' && corsOrigins.length > 0;
    const apiMethod = `${match ? method : preflight ? 'OPTIONS' : 'ANY'} ${resource}`;
    if (allowRequest && !allowRequest(apiMethod)) return refuse('THROTTLED');
    // The stage's MOCK methods (the preflight, the 404/405 answers) refuse a Content-Type they have no template for
    // (passthrough NEVER, service/integration-request.ts): API Gateway's UNSUPPORTED_MEDIA_TYPE, before any mock.
    // Asked only where a mock answers, never on a routed request.
    const mockRefusesBody = () =>
      integrationRequestOutcome(MOCK_ANSWER_REQUEST, lastHeaderValue(req, 'content-type')) === 'refused with 415';
    if (preflight) {
      // The stage's preflight is a MOCK method without authorizer: no key, no function.
      if (mockRefusesBody()) return refuse('UNSUPPORTED_MEDIA_TYPE');
      req.resume();
      res.writeHead(CORS_PREFLIGHT.status, corsPreflightHeaders(corsOrigins, lastHeaderValue(req, 'origin')));
      res.end();
      return CORS_PREFLIGHT.status;
    }

    const body = await readBody(req);
    if (body === 'aborted') return 'aborted';
    if (body === 'too-large') return send(unshapedAnswer(BODY_OVER_GATEWAY_LIMIT));

    const methodArn = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${LOCAL_API_ID}/${API_STAGE_NAME}/${method}${stagePath}`;
    // Every path under /v1 is behind the authorizer (the stage has an authorized catch-all), so 401 comes first.
    // The TOKEN identity source is the Authorization header whatever its case; of repeated ones, the last.
    const auth = await authorizeRequest(lastHeaderValue(req, 'authorization'), methodArn, requestId);
    if ('statusCode' in auth) return send(auth);

    if (match?.params) {
      const reply = await invokeRoute(match.route, req, rawQuery, body, match.params, auth, requestId, stagePath);
      return 'cookies' in reply ? sendStreamed(reply) : send(reply);
    }
    // What is left is answered by the stage's 404/405 MOCK methods.
    if (mockRefusesBody()) return send(answer('UNSUPPORTED_MEDIA_TYPE', requestId));
    const first = matches[0];
    if (first) {
      const allow = allowedMethods(first.route.path).join(', ');
      return send({
        statusCode: 405,
        headers: { ...COMMON_HEADERS, ...gatewayCorsHeaders(corsOrigins), Allow: allow },
        body: renderTemplate(errorTemplate('METHOD_NOT_ALLOWED', methodNotAllowedMessage(first.route.path, allow)), {
          httpMethod: method,
        }),
      });
    }
    return send(answer('MISSING_AUTHENTICATION_TOKEN', requestId));
  }

  const server = createServer(
    // API Gateway's header limit is checked by the gateway itself, and a missing Host answered with the Error body.
    { maxHeaderSize: NODE_MAX_HEADER_BYTES, requireHostHeader: false },
    (req, res) => {
      const started = process.hrtime.bigint();
      const requestId = randomUUID();
      handle(req, res, requestId)
        .catch(() => {
          // A defect of this emulator, never the answer to client input (the fuzz tests hold it to that).
          if (!res.headersSent) {
            const reply = answer('API_CONFIGURATION_ERROR', requestId);
            res.writeHead(reply.statusCode, reply.headers);
            res.end(reply.body);
          }
          return 500;
        })
        .then((status) => {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          const outcome =
            status === 'aborted'
              ? '- (client went away)'
              : status === 'stream aborted'
                ? '200 (stream aborted by the function)'
                : status;
          log(`${req.method} ${req.url} ${outcome} ${ms.toFixed(1)}ms`);
        });
    },
  );
  // Requests Node's HTTP parser refuses get a request id and what API Gateway would send: malformed framing its
  // DEFAULT_4XX response (the Error body), a header section past its limit its uncustomizable 413.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const response = (socket as { _httpMessage?: ServerResponse })._httpMessage;
    if (!socket.writable || error.code === 'ECONNRESET' || response?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const reply =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? unshapedAnswer(HEADERS_OVER_GATEWAY_LIMIT)
        : answer('DEFAULT_4XX', requestId);
    const headers = {
      ...reply.headers,
      'x-amzn-RequestId': requestId,
      'Content-Length': String(Buffer.byteLength(reply.body)),
      Connection: 'close',
    };
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.end(`HTTP/1.1 ${reply.statusCode} ${STATUS_CODES[reply.statusCode]}\r\n${head}\r\n\r\n${reply.body}`);
    log(`- - ${reply.statusCode} 0.0ms (${error.code ?? 'malformed request'})`);
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
