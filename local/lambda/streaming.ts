// The Lambda runtime's response streaming ("Writing response streaming-enabled Lambda functions"), outside Lambda.
// Erasable TypeScript and Node built-ins only: `bench/probe.mjs` imports it with Node's own type stripping.
import { PassThrough, type Readable, type Writable } from 'node:stream';

const HANDLER_STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
const STREAM_RESPONSE = 'response';

/** What `HttpResponseStream.from` is given: the HTTP answer less its body. */
interface HttpPrelude {
  statusCode?: number;
  headers?: Record<string, string>;
}

/** Who reads each response stream's prelude: the invocation that handed the stream to its function. */
const preludeReaders = new WeakMap<Writable, (prelude: HttpPrelude) => void>();

const HttpResponseStream = {
  from(stream: Writable, prelude: HttpPrelude): Writable {
    preludeReaders.get(stream)?.(prelude);
    return stream;
  },
};

/** `awslambda.streamifyResponse`: marks a handler the runtime calls with a response stream. */
export function streamifyResponse<T extends object>(handler: T): T {
  (handler as Record<symbol, unknown>)[HANDLER_STREAMING] = STREAM_RESPONSE;
  return handler;
}

/** Defines the runtime's `awslambda` global unless defined: middy reads it when a handler is built, at import. */
export function installLambdaStreamingRuntime(): void {
  const scope = globalThis as { awslambda?: Record<string, unknown> };
  if (typeof scope.awslambda?.streamifyResponse === 'function') return;
  scope.awslambda = { ...scope.awslambda, streamifyResponse, HttpResponseStream };
}

export function isStreamingHandler(handler: unknown): boolean {
  return (
    typeof handler === 'function' &&
    (handler as unknown as Record<symbol, unknown>)[HANDLER_STREAMING] === STREAM_RESPONSE
  );
}

/** A streamed HTTP response as API Gateway reads it: the prelude's status and headers, then the body as it comes. */
export interface StreamedHttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  /** The body bytes; destroyed with the error if the function fails after its prelude. */
  body: Readable;
}

type StreamingHandler = (event: unknown, responseStream: Writable, context: unknown) => unknown;

export interface StreamingInvocation {
  response: Promise<StreamedHttpResponse>;
  completion: Promise<void>;
  /** Stops the function as Lambda does at its timeout; whatever it writes or returns later goes nowhere. */
  stop(reason: Error): void;
}

/** `response` resolves with the prelude and rejects when the function fails or ends before one (API Gateway then
 * has only an integration failure); a failure after the prelude destroys `body`. */
export function invokeStreamingHandler(handler: unknown, event: unknown, context: unknown): StreamingInvocation {
  const stream = new PassThrough();
  const body = new PassThrough();
  let answer: { resolve(response: StreamedHttpResponse): void; reject(error: Error): void } | undefined;
  const response = new Promise<StreamedHttpResponse>((resolve, reject) => {
    answer = { resolve, reject };
  });
  let answered = false;
  let failed = false;
  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    const reason = error instanceof Error ? error : new Error(String(error));
    if (answered) body.destroy(reason);
    else answer?.reject(reason);
    stream.destroy();
  };
  preludeReaders.set(stream, (prelude) => {
    answered = true;
    answer?.resolve({ statusCode: prelude.statusCode ?? 200, headers: prelude.headers ?? {}, body });
    stream.pipe(body);
  });
  stream.on('error', fail);
  // A client gone before the end does not stop the function ("Response streaming for Lambda functions"): its writes
  // are dropped and it runs to its end.
  body.on('close', () => {
    if (body.writableFinished || failed) return;
    stream.unpipe(body);
    stream.resume();
  });
  const completion = (async () => {
    await (handler as StreamingHandler)(event, stream, context);
    if (!stream.writableEnded) throw new Error('Response stream is not finished.');
    if (!answered) throw new Error('the function ended its response without a prelude');
  })();
  // Also marks the completion handled: the caller watches `response` and `body`.
  completion.catch(fail);
  return { response, completion, stop: fail };
}

/** A handler's answer read whole (bench probes, bundle tests): a buffered one's return value, a streamed one's. */
export interface WholeAnswer {
  statusCode?: number;
  headers?: Record<string, string>;
  /** The body as text (as sent: still gzipped when Content-Encoding says so). */
  body?: string;
  bodyBytes: number;
  streamed: boolean;
}

/** Invokes any handler as the runtime would and reads its answer to the end; rejects when a body is cut off. */
export async function invokeToEnd(
  handler: unknown,
  event: unknown,
  context: unknown,
  options: { keepBody?: boolean } = {},
): Promise<WholeAnswer> {
  if (!isStreamingHandler(handler)) {
    // A buffered answer is whatever the handler returns (an authorizer's is a policy), kept as it is.
    const result = (await (handler as (e: unknown, c: unknown) => Promise<unknown>)(event, context)) as {
      body?: string;
    } | null;
    return { ...result, bodyBytes: Buffer.byteLength(result?.body ?? ''), streamed: false };
  }
  const { response, completion } = invokeStreamingHandler(handler, event, context);
  const { statusCode, headers, body } = await response;
  // With keepBody: false the bytes are counted and dropped, as Lambda passes them on: a probe measuring the function's
  // memory must not hold the whole body itself.
  const parts: Buffer[] = [];
  let bodyBytes = 0;
  for await (const chunk of body) {
    bodyBytes += (chunk as Buffer).length;
    if (options.keepBody !== false) parts.push(chunk as Buffer);
  }
  await completion;
  const text = options.keepBody !== false ? Buffer.concat(parts).toString('latin1') : undefined;
  return { statusCode, headers, body: text, bodyBytes, streamed: true };
}
