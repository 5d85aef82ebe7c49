import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { configureFunctionEnvironment } from '../../local/environment';
import { inventoryUpdateEvent, lambdaContext } from '../../local/lambda/events';
import { useLocalCredentials } from '../../service/local-dynamodb';
import { freshTables, putItems, testClient, testEndpoint } from '../helpers/local-stack';
import {
  lambdaTraceHeader,
  type SegmentDocument,
  startXRayDaemonStandIn,
  tracingEnvironment,
  type XRayDaemonStandIn,
} from '../helpers/xray-daemon';

/**
 * The DynamoDB call is a subsegment of the function's trace. The real update handler runs against DynamoDB Local with
 * the environment Lambda gives a function with active tracing: `_X_AMZN_TRACE_ID` (the segment Lambda records is the
 * parent of what the function sends), `AWS_XRAY_DAEMON_ADDRESS` pointing at a UDP stand-in for the X-Ray daemon, to
 * which the X-Ray SDK sends each subsegment as `{"format":"json","version":1}\n` + the document.
 *   X-Ray daemon protocol: https://docs.aws.amazon.com/xray/latest/devguide/xray-api-sendingdata.html#xray-api-daemon
 *   Powertools Tracer (captureLambdaHandler, captureAWSv3Client, annotations, POWERTOOLS_TRACE_ENABLED):
 *   https://docs.aws.amazon.com/powertools/typescript/latest/features/tracer/
 */
describe('Tracing: the update function traced as in Lambda, against an X-Ray daemon stand-in and DynamoDB Local', () => {
  let client: DynamoDBClient;
  let daemon: XRayDaemonStandIn;
  const saved = { ...process.env };

  beforeAll(async () => {
    client = testClient();
    daemon = await startXRayDaemonStandIn();
  });
  afterAll(async () => {
    process.env = saved;
    client.destroy();
    await daemon.close();
  });

  it('sends an UpdateItem DynamoDB subsegment inside the handler subsegment of the trace Lambda started, annotated with route and outcome', async () => {
    // Prepare
    const tables = await freshTables(client);
    await putItems(client, tables.inventory, [{ petId: '9223372036854775807', quantity: 2, status: 'pending' }]);
    useLocalCredentials();
    configureFunctionEnvironment(testEndpoint(), tables);
    const trace = lambdaTraceHeader();
    Object.assign(process.env, tracingEnvironment(daemon.address, trace.header));
    // Loaded now: the tracer and the X-Ray SDK read the environment when the module loads, as in a Lambda init.
    const { handler } = await import('../../functions/handlers/update-inventory');
    // Act
    const response = await handler(
      inventoryUpdateEvent('9223372036854775807', '{"quantity":5}'),
      lambdaContext({ functionName: 'update-inventory' }),
    );
    const documents = await documentsOf(daemon, trace.traceId, (docs) => docs.some(isHandlerSubsegment));
    // Assess
    expect(response.statusCode).toBe(200);
    expect(daemon.rejected).toBe(0);
    const handlerSegment = documents.find(isHandlerSubsegment);
    expect(handlerSegment).toMatchObject({
      type: 'subsegment',
      parent_id: trace.parentId,
      annotations: { route: 'PATCH /inventory/{petId}', outcome: '200' },
    });
    const dynamo = documents.filter((doc) => doc.name === 'DynamoDB');
    expect(dynamo).toHaveLength(1);
    expect(dynamo[0]).toMatchObject({
      type: 'subsegment',
      namespace: 'aws',
      parent_id: handlerSegment?.id,
      aws: { operation: 'UpdateItem', table_name: tables.inventory },
    });
    expect(dynamo[0]?.fault ?? false).toBe(false);
  });
});

function isHandlerSubsegment(doc: SegmentDocument): boolean {
  return doc.name === '## index.handler';
}

/** The documents of one trace, once `done` holds for them (datagrams arrive after the handler returns). */
async function documentsOf(
  daemon: XRayDaemonStandIn,
  traceId: string,
  done: (documents: SegmentDocument[]) => boolean,
): Promise<SegmentDocument[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const documents = daemon.documents.filter((doc) => doc.trace_id === traceId);
    if (done(documents)) return documents;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return daemon.documents.filter((doc) => doc.trace_id === traceId);
}
