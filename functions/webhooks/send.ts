import { Webhook } from 'standardwebhooks';
import { WEBHOOK_TIMEOUT_MS } from '../../service/webhooks';

/** Where a webhook goes, and the secret it is signed with (`whsec_…`). */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/** One webhook: its `webhook-id` (the event's id) and the exact body that is signed and sent. */
export interface WebhookMessage {
  id: string;
  body: string;
}

/** A webhook attempt the receiver did not acknowledge with a 2xx in time: it is retried. */
export class WebhookDeliveryError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WebhookDeliveryError';
  }
}

/** Bytes a Standard Webhooks HMAC secret holds ("Signature scheme": 24 to 64 random bytes, base64 after `whsec_`). */
const SECRET_BYTES = { min: 24, max: 64 };

/** Whether `text` is a signing secret in the Standard Webhooks form: `whsec_` and the base64 of 24 to 64 bytes. */
export function isWebhookSecret(text: string): boolean {
  const encoded = text.startsWith('whsec_') ? text.slice('whsec_'.length) : '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return false;
  const bytes = Buffer.from(encoded, 'base64').length;
  return bytes >= SECRET_BYTES.min && bytes <= SECRET_BYTES.max;
}

/** The Standard Webhooks headers of one attempt at `at` (signed by the standardwebhooks library). */
export function webhookHeaders(webhook: Webhook, message: WebhookMessage, at: Date): Record<string, string> {
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': webhook.sign(message.id, at, message.body),
  };
}

/**
 * Sends webhooks to one target: each attempt a POST signed at its own time, acknowledged by a 2xx within
 * {@link WEBHOOK_TIMEOUT_MS}; anything else (a redirect included, never followed) is a {@link WebhookDeliveryError}.
 */
export function createWebhookSender(target: WebhookTarget): (message: WebhookMessage) => Promise<void> {
  if (!isWebhookSecret(target.secret))
    throw new Error('A webhook secret must be whsec_ and the base64 of 24 to 64 bytes');
  const webhook = new Webhook(target.secret);
  return async function sendWebhook(message) {
    let response: Response;
    try {
      response = await fetch(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...webhookHeaders(webhook, message, new Date()) },
        body: message.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      const reason = timedOut ? `no answer within ${WEBHOOK_TIMEOUT_MS} ms` : (error as Error).message;
      throw new WebhookDeliveryError(`webhook ${message.id}: ${reason}`, { cause: error });
    }
    // The answer's body is not read: cancelling it frees the connection.
    await response.body?.cancel();
    if (!response.ok) throw new WebhookDeliveryError(`webhook ${message.id}: answered ${response.status}`);
  };
}
