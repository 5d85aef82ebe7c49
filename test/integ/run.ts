/**
 * `npm run integ`: deploys the integ app (integ-app.ts) with the project's own CDK CLI into the credentials' account
 * and region, twice, then destroys it, after a failure too:
 * 1. the stage and its assertions (a failed assertion fails the deploy);
 * 2. the stage again with every function's configuration changed, so CodeDeploy shifts each `live` alias through
 *    the pre-traffic hook, and the assertion that reads that deployment.
 *
 * `npm run integ -- --dry-run` (CI) only synthesizes it with that CLI, which refuses a cloud assembly newer than it
 * reads, with every credential taken out of its environment; the stage's functions are not bundled.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  INTEG_ASSERTION_STACK_NAME,
  INTEG_REVISION_CONTEXT,
  INTEG_ROLLOUT_STACK_NAME,
  INTEG_STACK_NAME,
} from './names';

const USAGE = 'usage: npm run integ [-- --dry-run]';

/** One run of the CDK CLI, and whether the run goes on when it fails. */
interface CdkStep {
  args: string[];
  /** Runs even after an earlier step failed (the destroy). */
  always?: boolean;
}

/**
 * What `npm run integ` runs for its arguments: the two deploys and the destroy, or with `--dry-run` only the synth.
 * @throws Error with {@link USAGE} for anything else
 */
function integSteps(argv: readonly string[]): { dryRun: boolean; steps: CdkStep[] } {
  let dryRun: boolean;
  try {
    dryRun =
      parseArgs({ args: [...argv], options: { 'dry-run': { type: 'boolean' } }, strict: true }).values['dry-run'] ===
      true;
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${USAGE}`);
  }
  if (dryRun)
    return {
      dryRun,
      steps: [{ args: ['synth', '--quiet', '--exclusively', INTEG_ASSERTION_STACK_NAME, INTEG_ROLLOUT_STACK_NAME] }],
    };
  const deploy = ['deploy', '--require-approval', 'never'];
  return {
    dryRun,
    steps: [
      { args: [...deploy, INTEG_STACK_NAME, INTEG_ASSERTION_STACK_NAME] },
      { args: [...deploy, INTEG_STACK_NAME, INTEG_ROLLOUT_STACK_NAME, '--context', `${INTEG_REVISION_CONTEXT}=2`] },
      { args: ['destroy', '--all', '--force'], always: true },
    ],
  };
}

/** The environment of a dry run's CLI: no credentials, no profile, no instance metadata, so no account is reached. */
function withoutCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = Object.fromEntries(Object.entries(env).filter(([name]) => !/^AWS_|^CDK_DEFAULT_/.test(name)));
  return {
    ...kept,
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

/** Runs the steps with the CLI (node_modules/.bin, on npm's PATH) on the integ app; true when every step succeeds. */
function run({ dryRun, steps }: ReturnType<typeof integSteps>): boolean {
  const output = mkdtempSync(join(tmpdir(), 'petstore-integ-'));
  const env = dryRun ? withoutCredentials(process.env) : process.env;
  const app = ['--app', 'npx tsx test/integ/integ.inventory.ts', '--output', output];
  let succeeded = true;
  try {
    for (const step of steps) {
      if (!succeeded && !step.always) continue;
      const status = spawnSync('cdk', [...step.args, ...app], { stdio: 'inherit', env }).status;
      succeeded &&= status === 0;
    }
  } finally {
    rmSync(output, { recursive: true, force: true });
  }
  return succeeded;
}

let plan: ReturnType<typeof integSteps> | undefined;
try {
  plan = integSteps(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 2;
}
if (plan) process.exitCode = run(plan) ? 0 : 1;
