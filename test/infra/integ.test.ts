import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
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

  it('deploys a throwaway stage with an SQS subscription to its alarm topic that lets only the tested ALARM through', () => {
    // Every other alarm's OK action fires after the deploy (INSUFFICIENT_DATA -> OK): unfiltered, the queue would
    // hold those first, and a receive of one message would rarely be the one the test set.
    Template.fromStack(stack).hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      RawMessageDelivery: true,
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: { AlarmName: [{ Ref: Match.anyValue() }], NewStateValue: ['ALARM'] },
    });
  });

  it('leaves the shared account stack out: integ-runner destroys every stack of its app, and the stages need it', () => {
    expect(
      app.node.children.filter((child) => child instanceof Stack).map((child) => (child as Stack).stackName),
    ).toEqual([stack.stackName, assertionStack.stackName]);
  });

  it('expects the self-check to answer its report with the checks that passed, not null', () => {
    const invoke = Object.values(
      assertions.Resources as Record<string, { Type: string; Properties: { expected?: string } }>,
    ).find((resource) => resource.Type === 'Custom::DeployAssert@SdkCallLambdainvoke');
    expect(JSON.parse(invoke?.Properties.expected ?? '{}')).toEqual({
      $ObjectLike: {
        StatusCode: 200,
        Payload: {
          $SerializedJson: { $ObjectLike: { passed: { $ArrayWith: [expect.any(String), expect.any(String)] } } },
        },
      },
    });
  });

  // The flush is `DELETE /restapis/{id}/stages/{stage}/cache/authorizers`, authorized as apigateway:DELETE on that
  // path (Service Authorization Reference, Amazon API Gateway Management): the provider's role must have it.
  it("gives the assertion provider apigateway:DELETE on the stage's authorizer cache, the flush's real action", () => {
    const statements = Object.values(
      assertions.Resources as Record<string, { Type: string; Properties: { Policies?: unknown } }>,
    )
      .filter((resource) => resource.Type === 'AWS::IAM::Role')
      .flatMap((role) => JSON.stringify(role.Properties.Policies ?? []));
    expect(statements.join('')).toContain('"apigateway:DELETE"');
    expect(statements.join('')).toContain('/cache/authorizers');
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
