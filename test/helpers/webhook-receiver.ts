import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a {@link WebhookReceiver} got. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP receiver on 127.0.0.1 that answers each POST as `answer` says, by the request and its number for its id. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

/** `hang` never answers (an attempt that times out). */
export type ReceiverAnswer = number | 'hang';

export async function startWebhookReceiver(
  answer: (request: ReceivedWebhook, attemptOfId: number) => ReceiverAnswer,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const attempts = new Map<string, number>();
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const webhook = { headers: request.headers, body };
      received.push(webhook);
      const id = String(request.headers['webhook-id']);
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      const status = answer(webhook, attempts.get(id) ?? 1);
      if (status !== 'hang') response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
