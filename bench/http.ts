/** The bench's client of `npm start`: one kept-alive connection, as a client SDK holds one. */
import { Agent, request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { stringifyExactJson } from '../client/index';

let agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** `npm start`'s API and the key the bench calls it with. */
export type Api = { baseUrl: string; apiKey: string };

/**
 * One exchange, timed to the first body byte and the last; `bytes` as sent (compressed when gzip), `text` decoded.
 * A kept-alive connection the server closed while idle is retried once (the bench's calls may be).
 */
export function call(url: string, method = 'GET', headers: Record<string, string> = {}, body?: string) {
  const once = () =>
    new Promise<{
      status: number;
      headers: Record<string, unknown>;
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

/** `method path` (under the API's base, or a whole URL) with the bench's key; throws unless it answers 2xx. */
export async function send(
  api: Api,
  method: string,
  path: string,
  body?: object,
  headers: Record<string, string> = {},
) {
  const auth = { Authorization: `Bearer ${api.apiKey}`, 'Content-Type': 'application/json', ...headers };
  const url = path.startsWith('http') ? path : `${api.baseUrl}${path}`;
  const answer = await call(url, method, auth, body === undefined ? undefined : stringifyExactJson(body));
  if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path} answered ${answer.status}`);
  return answer;
}

/** Closes the kept-alive connection (after a pause longer than the server's keep-alive time-out). */
export function closeHttp(): void {
  agent.destroy();
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
}
