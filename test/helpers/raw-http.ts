import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { routeRequest } from '../../local/gateway';
import { assertMatchesContract, withinContract } from './contract';

/** A response read byte for byte, with no client-side normalisation. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * Sends a request exactly as given (the path is not normalised or re-encoded, unlike fetch), for fuzzing and load
 * tests. Bounded: it fails after `timeoutMs`.
 */
export function rawRequest(
  baseUrl: string,
  options: {
    method: string;
    path: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    timeoutMs?: number;
  },
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  // Node's client sends a GET/DELETE/OPTIONS body with no framing unless told its length.
  const headers = { ...options.headers };
  if (options.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: options.method, path: options.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = {
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          };
          try {
            checkContract(options.method, options.path, raw);
            resolve(raw);
          } catch (error) {
            reject(error);
          }
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 15_000, () =>
      req.destroy(new Error(`no answer within ${options.timeoutMs ?? 15_000} ms`)),
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** The OpenAPI path template a raw path hits under /v1, if the contract describes it. */
export function routeOf(path: string): string | undefined {
  const rawPath = path.split('?')[0] ?? '';
  if (!withinContract(rawPath) || rawPath === '/v1') return undefined;
  // As API Gateway picks the resource: `/inventory/changes` before `/inventory/{petId}`.
  const match = routeRequest('GET', rawPath.slice('/v1'.length), false);
  return match.route?.path ?? match.resourcePath;
}

/** Every raw response is checked against openapi.yaml too, like the ones `call` receives. */
function checkContract(method: string, path: string, raw: RawResponse): void {
  if (!withinContract(path.split('?')[0] ?? '')) return;
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.text);
  } catch {
    json = undefined;
  }
  assertMatchesContract(method, routeOf(path), { status: raw.status, headers, text: raw.text, json });
}

/** Closes the pooled sockets (call in afterAll). */
export function closeRawAgent(): void {
  agent.destroy();
}

/** An answer read off a socket, for requests no HTTP client would send. */
export interface SocketResponse {
  status: number;
  /** Header names lower-cased; the last value of a repeated header. */
  headers: Record<string, string>;
  text: string;
}

/** The bytes of an HTTP/1.1 request: its request line, `headers` in order and as given, and `body`. */
export function rawHttp(requestLine: string, headers: [string, string][], body = ''): string {
  const lines = [requestLine, ...headers.map(([name, value]) => `${name}: ${value}`)];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Writes `request` as given onto a fresh connection (malformed framing, obs-fold, no Host, ...) and parses the one
 * answer: status line, headers and a Content-Length body. Fails after `timeoutMs`.
 */
export function socketExchange(
  baseUrl: string,
  request: string | Buffer,
  timeoutMs = 10_000,
  /** For HEAD: the answer ends with the connection whatever its Content-Length says, and `text` is every byte after the head. */
  untilClosed = false,
): Promise<SocketResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (outcome: SocketResponse | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    const tryParse = (ended: boolean) => {
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) {
        if (ended) finish(new Error(`connection closed without an answer: ${JSON.stringify(received.toString())}`));
        return;
      }
      const [statusLine = '', ...lines] = received.subarray(0, headEnd).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = received.subarray(headEnd + 4);
      const length = Number(headers['content-length'] ?? Number.NaN);
      if (untilClosed) {
        if (ended) finish({ status, headers, text: body.toString() });
      } else if (Number.isFinite(length) ? body.length >= length : ended) {
        finish({ status, headers, text: body.subarray(0, Number.isFinite(length) ? length : undefined).toString() });
      }
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('error', (error) => (received.length > 0 ? tryParse(true) : finish(error)));
    socket.write(request);
  });
}
