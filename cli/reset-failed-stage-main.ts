/**
 * `npm run stage:reset-failed -- <staging|production> [--dry-run]`: after a failed first deploy (the stack in
 * ROLLBACK_COMPLETE), deletes the stack despite its termination protection and removes what the rollback retained,
 * so `npm run deploy:<stage>` can be run again. docs/deploying.md, "A failed first deploy".
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';
import { STAGES, stackName } from '../service/names';
import { resetFailedStage } from './reset-failed-stage';

const [stage, ...flags] = process.argv.slice(2);
if (!STAGES.includes(stage as never) || flags.some((flag) => flag !== '--dry-run')) {
  process.stderr.write(`usage: npm run stage:reset-failed -- <${STAGES.join('|')}> [--dry-run]\n`);
  process.exit(2);
}
resetFailedStage(
  stackName(stage as (typeof STAGES)[number]),
  {
    cloudFormation: new CloudFormationClient({}),
    dynamodb: new DynamoDBClient({}),
    kms: new KMSClient({}),
    sqs: new SQSClient({}),
    logs: new CloudWatchLogsClient({}),
  },
  { dryRun: flags.includes('--dry-run'), log: (line) => process.stdout.write(`${line}\n`) },
).then(
  ({ notRemoved }) => {
    process.exitCode = notRemoved.length > 0 ? 1 : 0;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
