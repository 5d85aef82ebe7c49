import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { FEED_COUNTER_KEY, HISTORY_FEED_INDEX } from '../../service/names';
import { type ChangeEvent, changeEventJson } from '../inventory/change-event';
import { isJsonObject } from '../inventory/json-literals';
import { toChangeEvent } from '../store/history-table';
import type { WebhookMessage } from './send';

/**
 * The change event a record of the history table's stream adds to the feed; undefined for the rest (the feed's
 * counter row, a row's expiry, a row without its place in the feed).
 */
export function changeEventOf(record: DynamoDBRecord): ChangeEvent | undefined {
  const row = record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined;
  if (record.eventName === 'REMOVE' || row?.[HISTORY_FEED_INDEX.sort.name] === undefined) return undefined;
  if (row.petId?.N === FEED_COUNTER_KEY.petId) return undefined;
  return toChangeEvent(row);
}

/**
 * The `detail` of an event on the stage's bus: the webhook's id and exact body, with the petId and version a rule can
 * match on. EventBridge parses the detail as JSON, which may round a 19-digit number: the petId is a string here, and
 * the body, a string, is delivered as written (docs/api.md, "Webhooks").
 */
export function busEventDetail(event: ChangeEvent): string {
  return JSON.stringify({ id: event.id, petId: event.petId, version: event.version, body: changeEventJson(event) });
}

/** The webhook an EventBridge event (as a rule sends it to SQS) carries. @throws Error when it carries none */
export function webhookMessageOf(eventJson: string): WebhookMessage {
  const event: unknown = JSON.parse(eventJson);
  const detail = isJsonObject(event) ? event.detail : undefined;
  if (!isJsonObject(detail) || typeof detail.id !== 'string' || typeof detail.body !== 'string')
    throw new Error('The event carries no change event (detail.id and detail.body)');
  return { id: detail.id, body: detail.body };
}
