import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { tracer } from '../observability/tracer';

/** What a failure says when it is waived during a rollback. */
const NOT_FAILED_WHILE_ROLLING_BACK = '(not failed: the stack is rolling back)';

/**
 * The one waiver of the deploy gates: an update rollback may run them again on what it restores, where a failure
 * would only stop the rollback (UPDATE_ROLLBACK_FAILED). Asked after a failure: the warning that replaces it while the
 * stack rolls back, else undefined (the failure stands). Only a status that says so counts, never a failed question.
 */
export async function waivedWhileRollingBack(
  reason: string,
  rollingBack: (() => Promise<boolean>) | undefined,
): Promise<string | undefined> {
  const waived = await (rollingBack?.() ?? Promise.resolve(false)).catch(() => false);
  return waived ? `${reason} ${NOT_FAILED_WHILE_ROLLING_BACK}` : undefined;
}

/** Bounds of the deploy checks' AWS clients (CloudFormation, CodeDeploy): a hang becomes a named failure. */
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
