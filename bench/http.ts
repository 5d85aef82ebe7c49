import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { gunzipSync } from 'node:zlib';

const agents = () => ({
  http: new HttpAgent({ keepAlive: true, maxSockets: 1 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 1 }),
});
let agent = agents();

/** One HTTP exchange, timed to the first body byte and the last. */
export interface Exchange {
  status: number;
  ttfbMs: number;
  ttlbMs: number;
  /** Body bytes as sent on the wire (compressed when gzip). */
  bytes: number;
  /** The body decoded (gunzipped when gzip), when asked for. */
  text?: string;
}

export interface CallOptions {
  method?: string;
  headers: Record<string, string>;
  body?: string;
  /** Keep the body, decoded, as `text`. */
  keepText?: boolean;
}

/**
 * One call over a kept-alive connection, as a client SDK makes it; one that the server closed while idle is retried
 * once on a new connection (the benchmark's requests are idempotent, or keyed).
 */
export function httpCall(url: string, options: CallOptions): Promise<Exchange> {
  return exchange(url, options).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET') throw error;
    return exchange(url, options);
  });
}

function exchange(url: string, options: CallOptions): Promise<Exchange> {
  const secure = url.startsWith('https:');
  const send = secure ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = send(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: agent[secure ? 'https' : 'http'] },
      (res) => {
        let ttfbMs = 0;
        let bytes = 0;
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (bytes === 0) ttfbMs = performance.now() - started;
          bytes += chunk.length;
          if (options.keepText) parts.push(chunk);
        });
        res.on('end', () => {
          const ttlbMs = performance.now() - started;
          const raw = Buffer.concat(parts);
          const gzip = res.headers['content-encoding'] === 'gzip';
          const text = options.keepText ? (gzip ? gunzipSync(raw) : raw).toString('utf8') : undefined;
          resolve({ status: res.statusCode ?? 0, ttfbMs, ttlbMs, bytes, text });
        });
        res.on('error', reject);
        res.on('aborted', () => reject(new Error(`${url}: the stream was cut off`)));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Closes the kept-alive connections; later calls open new ones. */
export function closeHttp(): void {
  agent.http.destroy();
  agent.https.destroy();
  agent = agents();
}
