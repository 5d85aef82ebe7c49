import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { LAMBDA_MAX_PAYLOAD_BYTES } from '../../functions/http/responses';
import type { GatewayResponseType } from '../../service/gateway-responses';
import {
  AUTHORIZER_HANDLER,
  AUTHORIZER_TIMEOUT_SECONDS,
  DEFAULT_FUNCTION_TIMEOUT_SECONDS,
  ROUTES,
  type Route,
} from '../../service/routes';
import { lambdaContext } from '../lambda/events';
import {
  installLambdaStreamingRuntime,
  invokeStreamingHandler,
  isStreamingHandler,
  type StreamedHttpResponse,
} from '../lambda/streaming';
import { proxyEvent, type RouteRequest } from './proxy-event';

export type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;
export type HandlerLoader = (name: string) => Promise<LambdaHandler<unknown, unknown>>;

const HANDLERS_DIR = join(import.meta.dirname, '..', '..', 'functions', 'handlers');
// Loaded once, as a Lambda instance loads its function: a repeated import() still runs tsx's resolve hooks.
const loadedHandlers = new Map<string, Promise<LambdaHandler<unknown, unknown>>>();

/** Imports a handler module by the route table's name: the very modules the stack bundles. */
export function importHandler(name: string): Promise<LambdaHandler<unknown, unknown>> {
  const loaded = loadedHandlers.get(name) ?? loadHandlerModule(name);
  loadedHandlers.set(name, loaded);
  return loaded;
}

async function loadHandlerModule(name: string): Promise<LambdaHandler<unknown, unknown>> {
  // As the Lambda runtime does before loading a function: a streaming handler reads `awslambda` at import.
  installLambdaStreamingRuntime();
  const mod: { handler?: unknown } = await import(pathToFileURL(join(HANDLERS_DIR, `${name}.ts`)).href);
  if (typeof mod.handler !== 'function') throw new Error(`functions/handlers/${name} exports no handler`);
  return mod.handler as LambdaHandler<unknown, unknown>;
}

/** A function's timeout in milliseconds, as the stack sets it. */
export function defaultFunctionTimeoutMs(name: string): number {
  if (name === AUTHORIZER_HANDLER) return AUTHORIZER_TIMEOUT_SECONDS * 1000;
  const route = ROUTES.find((candidate) => candidate.handler === name);
  return (route?.timeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS) * 1000;
}

export const TIMED_OUT = Symbol('timed out');

// A late result or error is dropped, as a stopped Lambda instance never delivers one. A plain timer, as the streaming
// path's: aborting a timers/promises sleep builds an AbortError with its stack on every invocation.
async function invokeWithin<T>(invoke: () => Promise<T>, timeoutMs: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
    // Unref'd and cleared on return: a pending timeout never keeps the process (or a test run) alive.
    timer = setTimeout(resolve, timeoutMs, TIMED_OUT).unref();
  });
  try {
    return await Promise.race([Promise.resolve().then(invoke), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

export interface Functions {
  load: HandlerLoader;
  timeoutOf: (name: string) => number;
}

/** Loads the function of module `name` and invokes it with `event` up to its timeout. */
export async function invokeFunction(functions: Functions, name: string, functionName: string, event: unknown) {
  const handler = await functions.load(name);
  const timeoutMs = functions.timeoutOf(name);
  const context = lambdaContext({ functionName, requestId: randomUUID(), timeoutMs });
  return invokeWithin(() => handler(event, context), timeoutMs);
}

type RouteAnswer = APIGatewayProxyResult | StreamedHttpResponse | GatewayResponseType;

/** A function that throws, times out or cannot be loaded is INTEGRATION_FAILURE, as is an event over Lambda's 6 MB. */
export async function invokeRoute(request: RouteRequest, functions: Functions): Promise<RouteAnswer> {
  const event = proxyEvent(request);
  if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_MAX_PAYLOAD_BYTES) return 'INTEGRATION_FAILURE';
  const { route } = request;
  try {
    if (route.streaming) return await invokeStreaming(functions, route, event);
    const result = await invokeFunction(functions, route.handler, route.operationId, event);
    return result === TIMED_OUT ? 'INTEGRATION_FAILURE' : (result as APIGatewayProxyResult);
  } catch {
    return 'INTEGRATION_FAILURE';
  }
}

// Lambda stops a streaming function at its timeout: before the prelude the integration failed, after it the response
// is cut off.
async function invokeStreaming(functions: Functions, route: Route, event: APIGatewayProxyEvent) {
  const handler = await functions.load(route.handler);
  if (!isStreamingHandler(handler)) throw new Error(`${route.handler} does not stream its response`);
  const timeoutMs = functions.timeoutOf(route.handler);
  const context = lambdaContext({ functionName: route.operationId, requestId: randomUUID(), timeoutMs });
  const invocation = invokeStreamingHandler(handler, event, context);
  const stopAtTimeout = () => invocation.stop(new Error(`Task timed out after ${timeoutMs} ms`));
  const timer = setTimeout(stopAtTimeout, timeoutMs).unref();
  const clear = () => clearTimeout(timer);
  invocation.completion.then(clear, clear);
  return invocation.response;
}
