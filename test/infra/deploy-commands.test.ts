import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A stage is deployed through CloudFormation only: its functions' versions and `live` aliases move through CodeDeploy
 * (canary, pre-traffic hook, gate alarms) and a failed self-check rolls the update back. A hotswap deploy moves them
 * through the Lambda API instead (aws-cdk#18145, hotswapping Lambda Versions and Aliases) and `cdk watch` is
 * `cdk deploy --watch`, which hotswaps ("cdk watch", AWS CDK v2 CLI reference); `--no-rollback` (`-R`) keeps a failed
 * update in place, and `--express` "has automatic rollback disabled by default" (the installed CLI's own option
 * descriptions, aws-cdk lib/cli/cli-config.js). None of them may be one command away (docs/deploying.md, "Deploy"),
 * neither in a script nor as a default in cdk.json, whose top-level keys the CLI reads as option defaults.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as Record<string, unknown>;
const BYPASSES = /--hotswap|\bcdk watch\b|--watch\b|--no-rollback|--rollback[= ]false|(^|\s)-R\b|--express\b/;

describe('Deploy commands: nothing one command away skips CodeDeploy or the rollback', () => {
  it('sets no default in cdk.json that watches, hotswaps, turns rollback off or deploys in express mode', () => {
    const settings = Object.keys(read('cdk.json'));
    const bypassing = ['watch', 'hotswap', 'hotswapFallback', 'hotswap-fallback', 'rollback', 'express'];
    expect(settings.filter((key) => bypassing.includes(key))).toEqual([]);
  });

  it('has no npm script that hotswaps, watches or turns rollback off', () => {
    const scripts = read('package.json').scripts as Record<string, string>;
    expect(Object.entries(scripts).filter(([, command]) => BYPASSES.test(command))).toEqual([]);
    expect(scripts['deploy:staging']).toMatch(/^cdk deploy PetStoreInventory-staging /);
    expect(scripts['deploy:production']).toMatch(/^cdk deploy PetStoreInventory-production /);
  });

  it('recognizes each bypass it guards against', () => {
    for (const command of [
      'cdk deploy --hotswap',
      'cdk deploy --hotswap-fallback',
      'cdk watch',
      'cdk deploy --watch',
      'cdk deploy --no-rollback',
      'cdk deploy -R',
      'cdk deploy --rollback=false',
      'cdk deploy --express',
    ]) {
      expect(command).toMatch(BYPASSES);
    }
    expect('cdk deploy PetStoreInventory-staging -c deploying=staging').not.toMatch(BYPASSES);
  });
});
