import type {
  DeleteItemCommandInput,
  DeleteItemCommandOutput,
  GetItemCommandInput,
  GetItemCommandOutput,
  PutItemCommandInput,
  PutItemCommandOutput,
  ScanCommandInput,
  ScanCommandOutput,
  UpdateItemCommandInput,
  UpdateItemCommandOutput,
} from '@aws-sdk/client-dynamodb';

/**
 * The DynamoDB operations the table adapters use, with the SDK's low-level input and output shapes. The Lambda
 * functions get them from the lean client (`lean-dynamodb.ts`, no SDK in the bundle); the operator CLI and tests
 * from an SDK `DynamoDBClient` (`sdk-operations.ts`). Errors carry the service's short name (`error.name`, e.g.
 * `ConditionalCheckFailedException`) and `$metadata.httpStatusCode` either way.
 */
export interface DynamoOperations {
  deleteItem(input: DeleteItemCommandInput): Promise<DeleteItemCommandOutput>;
  getItem(input: GetItemCommandInput): Promise<GetItemCommandOutput>;
  putItem(input: PutItemCommandInput): Promise<PutItemCommandOutput>;
  scan(input: ScanCommandInput): Promise<ScanCommandOutput>;
  updateItem(input: UpdateItemCommandInput): Promise<UpdateItemCommandOutput>;
}
