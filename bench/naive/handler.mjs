// The naive baseline: what a first version of these functions often looks like. The SDK and middy are imported
// unbundled from node_modules; the list is one sequential Scan of the model's attributes, unmarshalled by the
// document client, and JSON.stringify, with no sort. Numbers are unmarshalled as NumberValue (`wrapNumbers`) and
// written as their digits, so ids past 2^53 stay exact. The client is built on first use, as the service's handlers
// do, so init compares imports with imports.
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
      // The model's attributes only: a stored entry may carry more (`lastChange`, the list index's key).
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
