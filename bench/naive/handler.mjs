// The naive baseline, a typical first version: SDK and middy unbundled, one sequential Scan, JSON.stringify, no sort;
// ids past 2^53 kept exact; the client built on first use, as the handlers build theirs, so init compares imports.
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
