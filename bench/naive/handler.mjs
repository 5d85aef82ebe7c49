// The naive baseline: what a first version of these functions often looks like. The SDK and middy are imported
// unbundled from node_modules, the document client unmarshals every attribute, the list is one sequential Scan
// and JSON.stringify. Numbers are unmarshalled as JSON.rawJSON of their digits (`wrapNumbers` takes a function), so
// ids past 2^53 neither throw nor round and JSON.stringify writes them as they are: still one Scan, one unmarshal,
// one stringify, with no sort.
// The client is built on first use, as the service's handlers do, so init compares imports with imports.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';

let documentClient;

export const handler = middy().handler(async function listInventoryNaively() {
  documentClient ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    unmarshallOptions: { wrapNumbers: (digits) => JSON.rawJSON(digits) },
  });
  const items = [];
  let startKey;
  do {
    const page = await documentClient.send(
      new ScanCommand({ TableName: process.env.INVENTORY_TABLE_NAME, ExclusiveStartKey: startKey }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(items) };
});
