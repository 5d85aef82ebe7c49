import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { tracer } from '../observability/tracer';

// An update rollback may run the checks again on the versions being restored, where a failure would only stop the
// rollback (UPDATE_ROLLBACK_FAILED): after a failure both checks ask the stack's status, and then only warn.

/** What a warning that would have been a failure says during a rollback. */
export const NOT_FAILED_WHILE_ROLLING_BACK = '(not failed: the stack is rolling back)';

/** A rollback goes on whatever is asked: only a stack status that says so counts, never a failed question. */
export async function isRollingBack(ask: (() => Promise<boolean>) | undefined): Promise<boolean> {
  try {
    return (await ask?.()) ?? false;
  } catch {
    return false;
  }
}

/** Bounds of the deploy checks' AWS clients (CloudFormation, SNS, CodeDeploy): a hang becomes a named failure. */
export const DEPLOY_CLIENT_BOUNDS = {
  maxAttempts: 3,
  requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
};

/**
 * Whether a stack is being rolled back, from its status (AWS CloudFormation User Guide, "Stack status codes":
 * `UPDATE_ROLLBACK_IN_PROGRESS`, `ROLLBACK_IN_PROGRESS`, …).
 */
export function stackRollingBack(
  stackId: string,
  client: CloudFormationClient = tracer.captureAWSv3Client(new CloudFormationClient(DEPLOY_CLIENT_BOUNDS)),
): () => Promise<boolean> {
  return async () => {
    const { Stacks = [] } = await client.send(new DescribeStacksCommand({ StackName: stackId }));
    return /ROLLBACK_IN_PROGRESS$/.test(Stacks[0]?.StackStatus ?? '');
  };
}
