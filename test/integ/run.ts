/**
 * `npm run integ`: deploys the integ app (integ-app.ts) with the project's own CDK CLI into the credentials' account
 * and region, twice, then destroys it, after a failure too:
 * 1. the stage and its assertions (a failed assertion fails the deploy);
 * 2. the stage again with every function's configuration changed, so CodeDeploy shifts each `live` alias through
 *    the pre-traffic hook, and the assertion that reads that deployment.
 *
 * `npm run integ:synth` (CI, no credentials) only synthesizes it with that CLI, which refuses a cloud assembly newer
 * than it reads; the stage's functions are not bundled (only the assertion stacks are named).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  INTEG_ASSERTION_STACK_NAME,
  INTEG_REVISION_CONTEXT,
  INTEG_ROLLOUT_STACK_NAME,
  INTEG_STACK_NAME,
} from './integ-app';

const output = mkdtempSync(join(tmpdir(), 'petstore-integ-'));

/** Runs the CLI (node_modules/.bin, on npm's PATH) on the integ app; true when it succeeds. */
function cdk(...args: string[]): boolean {
  const app = ['--app', 'npx tsx test/integ/integ.inventory.ts', '--output', output];
  return spawnSync('cdk', [...args, ...app], { stdio: 'inherit' }).status === 0;
}

function run(): boolean {
  if (process.argv[2] === 'synth')
    return cdk('synth', '--quiet', '--exclusively', INTEG_ASSERTION_STACK_NAME, INTEG_ROLLOUT_STACK_NAME);
  const deploy = ['deploy', '--require-approval', 'never'];
  const proved =
    cdk(...deploy, INTEG_STACK_NAME, INTEG_ASSERTION_STACK_NAME) &&
    cdk(...deploy, INTEG_STACK_NAME, INTEG_ROLLOUT_STACK_NAME, '--context', `${INTEG_REVISION_CONTEXT}=2`);
  const destroyed = cdk('destroy', '--all', '--force');
  return proved && destroyed;
}

try {
  process.exitCode = run() ? 0 : 1;
} finally {
  rmSync(output, { recursive: true, force: true });
}
