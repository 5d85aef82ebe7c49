import { Agent, request } from 'node:http';

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
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
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

/** Closes the pooled sockets (call in afterAll). */
export function closeRawAgent(): void {
  agent.destroy();
}
