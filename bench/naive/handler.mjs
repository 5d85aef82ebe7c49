// The naive baseline: what a first version of these functions often looks like. The SDK and middy are imported
// unbundled from node_modules, the document client unmarshals every attribute of the model (a projection: entries
// also carry the list index's shard), the list is one sequential Scan
// and JSON.stringify. Numbers are unmarshalled as NumberValue (`wrapNumbers`), so ids past 2^53 neither throw nor
// round (and the next page's start key marshals back), and the stringify replacer writes their digits as they are:
// still one sequential Scan, one unmarshal, one stringify, with no sort.
// The client is built on first use, as the service's handlers do, so init compares imports with imports.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, NumberValue, ScanCommand } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';

let documentClient;

export const handler = middy().handler(async function listInventoryNaively() {
  documentClient ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    unmarshallOptions: { wrapNumbers: true },
  });
  const items = [];
  let startKey;
  do {
    const page = await documentClient.send(
      // The model's attributes only: since the list index, every entry also carries its shard (`listShard`).
      new ScanCommand({
        TableName: process.env.INVENTORY_TABLE_NAME,
        ProjectionExpression: 'petId, quantity, #status',
        ExpressionAttributeNames: { '#status': 'status' },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(items, (_, v) => (v instanceof NumberValue ? JSON.rawJSON(v.value) : v)),
  };
});
