import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { CHANGE_EVENT_DETAIL_TYPE, CHANGE_EVENT_SOURCE } from '../../service/webhooks';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import type { ChangeEvent } from '../inventory/change-event';
import { observed } from '../observability/chain';
import { metrics } from '../observability/metrics';
import { annotateTrace, tracer } from '../observability/tracer';
import { failedItems } from '../webhooks/batch';
import { busEventDetail, changeEventOf } from '../webhooks/change-records';

/** Where change events go: one event on the bus per change. @throws Error when the bus refused it */
export type ChangePublisher = (event: ChangeEvent) => Promise<void>;

/**
 * The publisher: each change the history table's stream adds to the feed, put on the stage's event bus; records it
 * could not put are batch item failures, which the event source mapping retries.
 */
export function createHandler(deps: Deps<{ publish: ChangePublisher }>) {
  const resolve = resolveDeps(deps);
  return observed(middy<DynamoDBStreamEvent, DynamoDBBatchResponse>()).handler(async function publishChanges(event) {
    const { publish } = resolve();
    let published = 0;
    const batchItemFailures = await failedItems(event.Records, {
      process: async (record) => {
        const change = changeEventOf(record);
        if (change === undefined) return;
        await publish(change);
        published++;
      },
      identify: (record) => record.dynamodb?.SequenceNumber ?? '',
    });
    metrics.addMetric(METRIC_NAMES.changesPublished, 'Count', published);
    metrics.addMetric(METRIC_NAMES.changesNotPublished, 'Count', batchItemFailures.length);
    annotateTrace({ route: 'history stream', outcome: batchItemFailures.length === 0 ? 'published' : 'partial' });
    return { batchItemFailures };
  });
}

/** Puts change events on an EventBridge bus, `source` and `detail-type` those of service/webhooks.ts. */
export function eventBusPublisher(client: EventBridgeClient, eventBusName: string): ChangePublisher {
  return async function putChangeEvent(change) {
    const { FailedEntryCount, Entries } = await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: eventBusName,
            Source: CHANGE_EVENT_SOURCE,
            DetailType: CHANGE_EVENT_DETAIL_TYPE,
            Detail: busEventDetail(change),
            Time: new Date(change.at),
          },
        ],
      }),
    );
    const refused = Entries?.[0];
    if (FailedEntryCount)
      throw new Error(`PutEvents refused ${change.id}: ${refused?.ErrorCode} ${refused?.ErrorMessage}`);
  };
}

export const handler = createHandler(
  once(() => ({
    publish: eventBusPublisher(tracer.captureAWSv3Client(new EventBridgeClient({})), requireEnv(ENV.changeEventBus)),
  })),
);
