/** The bench's client of `npm start`: one kept-alive connection, as a client SDK holds one. */
import { Agent, request } from 'node:http';
import { gunzipSync } from 'node:zlib';

let agent = new Agent({ keepAlive: true, maxSockets: 1 });

/**
 * One exchange, timed to the first body byte and the last; `bytes` as sent (compressed when gzip), `text` decoded.
 * A kept-alive connection the server closed while idle is retried once (the bench's calls may be).
 */
export function call(url: string, method = 'GET', headers: Record<string, string> = {}, body?: string) {
  const once = () =>
    new Promise<{
      status: number;
      headers: Record<string, string | string[] | undefined>;
      ttfbMs: number;
      ttlbMs: number;
      bytes: number;
      text: string;
    }>((resolve, reject) => {
      const started = performance.now();
      const req = request(url, { method, headers, agent }, (res) => {
        let ttfbMs = 0;
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (parts.length === 0) ttfbMs = performance.now() - started;
          parts.push(chunk);
        });
        res.on('end', () => {
          const ttlbMs = performance.now() - started;
          const raw = Buffer.concat(parts);
          const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, ttfbMs, ttlbMs, bytes: raw.length, text });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  return once().catch((error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? once() : Promise.reject(error)));
}

/** Closes the kept-alive connection (after a pause longer than the server's keep-alive time-out). */
export function closeHttp(): void {
  agent.destroy();
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
}
