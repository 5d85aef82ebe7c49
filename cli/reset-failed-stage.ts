import {
  type CloudFormationClient,
  DeleteStackCommand,
  DescribeStacksCommand,
  ListStackResourcesCommand,
  UpdateTerminationProtectionCommand,
} from '@aws-sdk/client-cloudformation';
import { type CloudWatchLogsClient, DeleteLogGroupCommand } from '@aws-sdk/client-cloudwatch-logs';
import {
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { type KMSClient, ScheduleKeyDeletionCommand } from '@aws-sdk/client-kms';
import { DeleteQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** The clients the reset uses; tests pass stand-ins that answer as AWS documents. */
export interface ResetClients {
  cloudFormation: Pick<CloudFormationClient, 'send'>;
  dynamodb: Pick<DynamoDBClient, 'send'>;
  kms: Pick<KMSClient, 'send'>;
  sqs: Pick<SQSClient, 'send'>;
  logs: Pick<CloudWatchLogsClient, 'send'>;
}

/** A resource a failed create left behind (its DeletionPolicy is Retain, so the rollback skipped deleting it). */
export interface Leftover {
  type: string;
  logicalId: string;
  physicalId: string;
}

/** The status of a stack whose first create failed and was rolled back: it can only be deleted. */
export const FAILED_CREATE_STATUS = 'ROLLBACK_COMPLETE';

/** Days a scheduled KMS key deletion waits (the shortest KMS allows). */
const KEY_DELETION_DAYS = 7;

/** How often, and how many times, a table is asked whether its update is done before it is deleted (5 minutes). */
const TABLE_POLL_MS = 5000;
const TABLE_POLLS = 60;

/**
 * Deletes a stack in ROLLBACK_COMPLETE and the resources its rollback retained, so the first deploy can run again.
 * Any other status is refused: a stack that ever was good holds real data.
 */
export async function resetFailedStage(
  stackName: string,
  clients: ResetClients,
  options: { dryRun: boolean; log: (line: string) => void; sleep?: (ms: number) => Promise<void> },
): Promise<{ leftovers: Leftover[]; notRemoved: Leftover[] }> {
  const cfn = clients.cloudFormation;
  const status = await stackStatus(cfn, stackName);
  if (status !== FAILED_CREATE_STATUS)
    throw new Error(
      `${stackName} is ${status ?? 'not deployed'}, not ${FAILED_CREATE_STATUS}: only a stack whose first create ` +
        'failed is reset (nothing is changed)',
    );
  const leftovers = await retainedResources(cfn, stackName);
  for (const left of leftovers) options.log(`left behind: ${left.type} ${left.logicalId} ${left.physicalId}`);
  if (options.dryRun) return { leftovers, notRemoved: [] };

  await cfn.send(new UpdateTerminationProtectionCommand({ StackName: stackName, EnableTerminationProtection: false }));
  await cfn.send(new DeleteStackCommand({ StackName: stackName }));
  const sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  for (;;) {
    const now = await stackStatus(cfn, stackName);
    if (now === undefined || now === 'DELETE_COMPLETE') break;
    if (now === 'DELETE_FAILED') throw new Error(`CloudFormation could not delete ${stackName} (DELETE_FAILED)`);
    await sleep(5000);
  }
  options.log(`deleted stack ${stackName}`);

  const notRemoved: Leftover[] = [];
  for (const left of leftovers) {
    try {
      if (await removeLeftover(left, clients, sleep)) options.log(`removed ${left.type} ${left.physicalId}`);
      else notRemoved.push(left);
    } catch (error) {
      options.log(`could not remove ${left.type} ${left.physicalId}: ${errorText(error)}`);
      notRemoved.push(left);
    }
  }
  for (const left of notRemoved) options.log(`not removed (remove it yourself): ${left.type} ${left.physicalId}`);
  return { leftovers, notRemoved };
}

async function stackStatus(cfn: ResetClients['cloudFormation'], stackName: string): Promise<string | undefined> {
  try {
    const answer = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
    return answer.Stacks?.[0]?.StackStatus;
  } catch (error) {
    if (error instanceof Error && /does not exist/.test(error.message)) return undefined;
    throw error;
  }
}

async function retainedResources(cfn: ResetClients['cloudFormation'], stackName: string): Promise<Leftover[]> {
  const leftovers: Leftover[] = [];
  let NextToken: string | undefined;
  do {
    const page = await cfn.send(new ListStackResourcesCommand({ StackName: stackName, NextToken }));
    for (const r of page.StackResourceSummaries ?? []) {
      if (r.ResourceStatus === 'DELETE_SKIPPED' && r.PhysicalResourceId && r.ResourceType && r.LogicalResourceId)
        leftovers.push({ type: r.ResourceType, logicalId: r.LogicalResourceId, physicalId: r.PhysicalResourceId });
    }
    NextToken = page.NextToken;
  } while (NextToken);
  return leftovers;
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Lifting deletion protection leaves a table UPDATING, which DeleteTable refuses: wait for ACTIVE. */
async function untilTableActive(
  dynamodb: ResetClients['dynamodb'],
  tableName: string,
  sleep: (ms: number) => Promise<void>,
) {
  for (let poll = 0; poll < TABLE_POLLS; poll++) {
    const answer = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    if (answer.Table?.TableStatus === 'ACTIVE') return;
    await sleep(TABLE_POLL_MS);
  }
  throw new Error(`table ${tableName} was not ACTIVE after ${(TABLE_POLLS * TABLE_POLL_MS) / 1000} s`);
}

/** Removes one leftover the way its service deletes it; false for a type it does not know. */
async function removeLeftover(
  left: Leftover,
  clients: ResetClients,
  sleep: (ms: number) => Promise<void>,
): Promise<boolean> {
  switch (left.type) {
    case 'AWS::DynamoDB::Table':
      // Production tables refuse deletion until their deletion protection is off.
      await clients.dynamodb.send(
        new UpdateTableCommand({ TableName: left.physicalId, DeletionProtectionEnabled: false }),
      );
      await untilTableActive(clients.dynamodb, left.physicalId, sleep);
      await clients.dynamodb.send(new DeleteTableCommand({ TableName: left.physicalId }));
      return true;
    case 'AWS::KMS::Key':
      await clients.kms.send(
        new ScheduleKeyDeletionCommand({ KeyId: left.physicalId, PendingWindowInDays: KEY_DELETION_DAYS }),
      );
      return true;
    case 'AWS::SQS::Queue':
      await clients.sqs.send(new DeleteQueueCommand({ QueueUrl: left.physicalId }));
      return true;
    case 'AWS::Logs::LogGroup':
      await clients.logs.send(new DeleteLogGroupCommand({ logGroupName: left.physicalId }));
      return true;
    default:
      return false;
  }
}
