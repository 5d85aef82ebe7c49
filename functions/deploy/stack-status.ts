import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { tracer } from '../observability/tracer';

/**
 * What a deploy-time check does while its stack rolls back. An update rollback runs the previous self-check again
 * and may move each `live` alias back through CodeDeploy (AWS does not say), whose pre-traffic hook would then probe
 * the versions being restored; AWS documents no order for an update rollback's resources, and a check that fails then only stops the
 * rollback (UPDATE_ROLLBACK_FAILED: "Continue rolling back an update", AWS CloudFormation User Guide). Both checks
 * therefore ask their stack's status after a failure, and while it is rolling back report the failure as a warning.
 */

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
