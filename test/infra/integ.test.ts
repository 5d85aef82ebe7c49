import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { cdkJsonContext } from '../../infra/synthesized-assets';
import { createIntegApp } from '../integ/integ-app';

/**
 * What CI can do of `npm run integ` without credentials: synthesize the integ app (the throwaway stage and the
 * assertion stack integ-tests adds) and check each assertion is there; tsc type-checks the assertions.
 */
describe('The integ app of npm run integ', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'petstore-integ-test-'));
  const { app, assertionStack, stack } = createIntegApp(
    { outdir, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } },
    {},
  );
  app.synth();
  const assertions = Template.fromStack(assertionStack).toJSON();
  const calls = JSON.stringify(assertions.Resources);

  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('deploys a throwaway stage with an SQS subscription to its alarm topic', () => {
    Template.fromStack(stack).hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      RawMessageDelivery: true,
    });
  });

  it('runs the self-check, sets an alarm and reads its notification, revokes a key and sees it refused', () => {
    for (const call of [
      'invoke',
      'setAlarmState',
      'receiveMessage',
      'putItem',
      'updateItem',
      'flushStageAuthorizersCache',
    ])
      expect(calls).toContain(call);
    const httpExpectations = Object.values(
      assertions.Resources as Record<string, { Type: string; Properties: { expected?: string } }>,
    )
      .filter((resource) => resource.Type === 'Custom::DeployAssert@HttpCall')
      .map((resource) => JSON.parse(resource.Properties.expected ?? '{}'));
    // The key is accepted, then (revoked, the cache flushed) refused at once.
    expect(httpExpectations).toEqual([{ $ObjectLike: { status: 200 } }, { $ObjectLike: { status: 401 } }]);
  });
});
