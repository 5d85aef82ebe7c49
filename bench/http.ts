import { Agent, request } from 'node:http';
import { gunzipSync } from 'node:zlib';

let agent = new Agent({ keepAlive: true, maxSockets: 1 });

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
 * One call over a kept-alive connection, as a client SDK makes it; one that the gateway closed while idle is retried
 * once on a new connection (the benchmark's requests are idempotent).
 */
export function httpCall(url: string, options: CallOptions): Promise<Exchange> {
  return exchange(url, options).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET') throw error;
    return exchange(url, options);
  });
}

function exchange(url: string, options: CallOptions): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent }, (res) => {
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
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Closes the kept-alive connections; later calls open new ones. */
export function closeHttp(): void {
  agent.destroy();
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
}
