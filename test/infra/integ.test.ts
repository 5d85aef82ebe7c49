import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { type CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ENV } from '../../functions/config';
import { CHECKS } from '../../functions/self-check/checks';
import type { InventoryStack } from '../../infra/inventory-stack';
import { cdkJsonContext } from '../../infra/synthesized-assets';
import { STAGE_DIMENSION } from '../../service/metric-names';
import { createIntegApp } from '../integ/integ-app';
import { INTEG_REVISION_CONTEXT, INTEG_STAGE } from '../integ/names';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}

/**
 * The integ app synthesized offline (no bundling), with the given context on top of cdk.json's. Without the
 * built-in CloudFormation validation, which never changes a template and costs seconds a synth: `npm run integ --
 * --dry-run` runs it on this app.
 */
function synthesize(context: Record<string, unknown> = {}) {
  const outdir = mkdtempSync(join(tmpdir(), 'petstore-integ-test-'));
  const integ = createIntegApp(
    {
      outdir,
      context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context },
      builtinCloudFormationValidation: false,
    },
    {},
  );
  integ.app.synth();
  return { ...integ, dispose: () => rmSync(outdir, { recursive: true, force: true }) };
}

function resources(stack: Stack): Resource[] {
  return Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, Resource>);
}

/** Each expectation of a stack's assertions: the call's type, its parameters and what it expects. */
function expectations(stack: Stack) {
  return resources(stack)
    .filter((resource) => typeof resource.Properties.expected === 'string')
    .map((resource) => ({
      type: resource.Type,
      api: resource.Properties.api,
      parameters: resource.Properties.parameters as Record<string, unknown>,
      expected: JSON.parse(resource.Properties.expected as string),
    }));
}

/** The inline policies of a stack's roles, as one JSON text. */
function rolePolicies(stack: Stack): string {
  return resources(stack)
    .filter((resource) => resource.Type === 'AWS::IAM::Role')
    .map((role) => JSON.stringify(role.Properties.Policies ?? []))
    .join('');
}

/**
 * What CI can check of `npm run integ` without credentials: the integ app synthesizes (the throwaway stage and the
 * assertion stacks integ-tests fills), every assertion is there and fails the deploy when it fails; tsc type-checks
 * them. `npm run integ -- --dry-run` synthesizes it with the CLI that deploys it.
 */
describe('The integ app of npm run integ', () => {
  const { app, stack, assertionStack, rolloutStack, dispose } = synthesize();
  const clientCalls = expectations(assertionStack).filter((call) => call.type === 'Custom::DeployAssert@HttpCall');

  afterAll(dispose);

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

  it(`names its stage ${INTEG_STAGE} in every function, metric dimension and alarm, never staging or production`, () => {
    const template = JSON.stringify(Template.fromStack(stack).toJSON());
    const stageValues = (pattern: RegExp) => [...template.matchAll(pattern)].map((match) => match[1]);
    // Every function's STAGE, and every `stage` dimension of an alarm's or a dashboard's metric.
    const functionStages = stageValues(new RegExp(`"${ENV.stage}":"([^"]*)"`, 'g'));
    const dimensions = stageValues(new RegExp(`\\{"Name":"${STAGE_DIMENSION}","Value":"([^"]*)"\\}`, 'g'));
    expect(functionStages.length).toBeGreaterThan(5);
    expect(dimensions.length).toBeGreaterThan(0);
    expect(new Set([...functionStages, ...dimensions])).toEqual(new Set([INTEG_STAGE]));
    expect(template).not.toMatch(/\bstaging\b|\bproduction\b/);
  });

  it('leaves the shared account stack out: the run destroys every stack of the app, and the stages need it', () => {
    expect(
      app.node.children.filter((child) => child instanceof Stack).map((child) => (child as Stack).stackName),
    ).toEqual([stack.stackName, assertionStack.stackName, rolloutStack.stackName]);
  });

  // Outside integ-runner, an expectation's mismatch is only recorded in an output while its custom resource succeeds
  // (integ-tests' handler honours failDeployment only for an EqualsAssertion); a waiter fails it after its time-out.
  it.each([
    ['first deploy', assertionStack],
    ['second deploy', rolloutStack],
  ])('makes every assertion of the %s fail the deploy when it fails (awaited, or failDeployment)', (_, assertions) => {
    const asserting = resources(assertions).filter(
      (resource) => resource.Properties.expected !== undefined || resource.Type === 'Custom::DeployAssert@AssertEquals',
    );
    expect(asserting.length).toBeGreaterThan(1);
    const silent = asserting.filter(
      (resource) => resource.Properties.stateMachineArn === undefined && resource.Properties.failDeployment !== true,
    );
    expect(silent).toEqual([]);
  });

  it('expects the self-check to answer its report with every deploy check passed', () => {
    const invoke = expectations(assertionStack).find(
      (call) => call.type === 'Custom::DeployAssert@SdkCallLambdainvoke',
    );
    expect(invoke?.expected).toEqual({
      $ObjectLike: {
        StatusCode: 200,
        Payload: {
          $SerializedJson: { $ObjectLike: { passed: { $ArrayWith: CHECKS.map(({ name }) => name) } } },
        },
      },
    });
  });

  it('sets the alarm and reads its notification from the queue', () => {
    const calls = JSON.stringify(Template.fromStack(assertionStack).toJSON().Resources);
    for (const call of ['setAlarmState', 'receiveMessage']) expect(calls).toContain(call);
    expect(expectations(assertionStack).find((call) => call.api === 'receiveMessage')?.expected).toEqual({
      $Exact: 'ALARM',
    });
  });

  it('seeds one entry in the list index, and puts a write key and a read key in the keys table', () => {
    const puts = resources(assertionStack)
      .filter((resource) => resource.Properties.api === 'putItem')
      .map((resource) => JSON.parse((resource.Properties.parameters as { Item: string }).Item));
    expect(puts).toEqual([
      expect.objectContaining({ scope: { S: 'write' } }),
      expect.objectContaining({ scope: { S: 'read' } }),
      {
        petId: { N: '4242' },
        quantity: { N: '5' },
        status: { S: 'available' },
        version: { N: '1' },
        listShard: { N: '0' },
      },
    ]);
  });

  it('lists the entry gzipped and streamed (chunked, as a buffered answer is not), then replays an adjustBy by its Idempotency-Key', () => {
    const [list, first, replayed] = clientCalls;
    expect(list?.expected).toEqual({
      $ObjectLike: {
        status: 200,
        headers: { $ObjectLike: { 'content-encoding': ['gzip'], 'transfer-encoding': ['chunked'] } },
        body: [{ petId: 4242, quantity: 5, status: 'available' }],
      },
    });
    expect(list?.parameters.fetchOptions).toMatchObject({ headers: { 'Accept-Encoding': 'gzip' } });
    const adjusted = { petId: 4242, quantity: 8, status: 'available' };
    expect(first?.expected).toEqual({ $ObjectLike: { status: 200, body: adjusted } });
    expect(replayed?.expected).toEqual({
      $ObjectLike: { status: 200, headers: { $ObjectLike: { 'idempotent-replayed': ['true'] } }, body: adjusted },
    });
    // One request sent twice: same key, same body.
    expect(first?.parameters.fetchOptions).toEqual(replayed?.parameters.fetchOptions);
    expect(first?.parameters.fetchOptions).toMatchObject({
      method: 'PATCH',
      body: '{"adjustBy":3}',
      headers: { 'Idempotency-Key': expect.any(String) },
    });
  });

  it("refuses the read key's PATCH with 403, and the stored stock moved once", () => {
    const refused = clientCalls[3];
    expect(refused?.expected).toEqual({
      $ObjectLike: { status: 403, body: { $ObjectLike: { code: 'ACCESS_DENIED', status: 403 } } },
    });
    expect(refused?.parameters.fetchOptions).toMatchObject({ method: 'PATCH' });
    expect(expectations(assertionStack).find((call) => call.api === 'getItem')?.expected).toEqual({
      $ObjectLike: { Item: { $ObjectLike: { quantity: { N: '8' } } } },
    });
  });

  it('revokes the write key, flushes the authorizer cache and expects the key refused', () => {
    const calls = JSON.stringify(Template.fromStack(assertionStack).toJSON().Resources);
    for (const call of ['updateItem', 'flushStageAuthorizersCache']) expect(calls).toContain(call);
    expect(clientCalls.map((call) => call.expected.$ObjectLike.status)).toEqual([200, 200, 200, 403, 401]);
  });

  // The flush is `DELETE /restapis/{id}/stages/{stage}/cache/authorizers`, authorized as apigateway:DELETE on that
  // path (Service Authorization Reference, Amazon API Gateway Management): the provider's role must have it.
  it("gives the assertion provider apigateway:DELETE on the stage's authorizer cache, the flush's real action", () => {
    expect(rolePolicies(assertionStack)).toContain('"apigateway:DELETE"');
    expect(rolePolicies(assertionStack)).toContain('/cache/authorizers');
  });

  it("reads, in the second deploy, the update's CodeDeploy deployment: Succeeded, its BeforeAllowTraffic too", () => {
    const [deployment, target] = expectations(rolloutStack);
    expect(deployment).toMatchObject({
      api: 'getDeployment',
      expected: { $ObjectLike: { deploymentInfo: { status: 'Succeeded' } } },
    });
    expect(target).toMatchObject({
      api: 'getDeploymentTarget',
      expected: {
        $ObjectLike: {
          deploymentTarget: {
            lambdaTarget: {
              lifecycleEvents: {
                $ArrayWith: [{ $ObjectLike: { lifecycleEventName: 'BeforeAllowTraffic', status: 'Succeeded' } }],
              },
            },
          },
        },
      },
    });
    for (const action of ['ListDeployments', 'GetDeployment', 'ListDeploymentTargets', 'GetDeploymentTarget'])
      expect(rolePolicies(rolloutStack)).toContain(`"codedeploy:${action}"`);
  });

  it('publishes a new version of every function behind a live alias when the revision is set', () => {
    const revised = synthesize({ [INTEG_REVISION_CONTEXT]: '2' });
    try {
      const versionIds = (stage: InventoryStack) =>
        [...stage.functions.values()].map((fn) =>
          stage.resolve((fn.currentVersion.node.defaultChild as CfnElement).logicalId),
        );
      const before = versionIds(stack);
      const after = versionIds(revised.stack);
      expect(after).toHaveLength(before.length);
      expect(after.filter((id) => before.includes(id))).toEqual([]);
    } finally {
      revised.dispose();
    }
  });
});

/**
 * `npm run integ` as an operator runs it, with credentials in the environment: the CDK CLI it spawns is a stand-in
 * first on PATH that records each run's arguments and whether it saw a credential, so a deploy or a destroy cannot
 * go unnoticed.
 */
describe('npm run integ: its arguments', () => {
  const bin = mkdtempSync(join(tmpdir(), 'petstore-integ-cdk-'));
  const calls = join(bin, 'calls');
  writeFileSync(
    join(bin, 'cdk'),
    `#!/bin/sh\necho "$1 credentials=\${AWS_ACCESS_KEY_ID:-none}/\${AWS_PROFILE:-none}" >> "${calls}"\n`,
  );
  chmodSync(join(bin, 'cdk'), 0o755);

  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  function integ(...args: string[]) {
    rmSync(calls, { force: true });
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'test/integ/run.ts', ...args], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PATH: `${bin}${delimiter}${process.env.PATH}`,
        AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        AWS_PROFILE: 'integ',
      },
    });
    let spawned: string[] = [];
    try {
      spawned = readFileSync(calls, 'utf8').trim().split('\n');
    } catch {
      // No CLI run at all.
    }
    return { status: result.status, stderr: result.stderr, spawned };
  }

  it('with --dry-run only synthesizes, and the CLI gets no credential: no account is reached', () => {
    const { status, spawned } = integ('--dry-run');
    expect(status).toBe(0);
    expect(spawned).toEqual(['synth credentials=none/none']);
  });

  it('without arguments deploys twice, then destroys, with the credentials', () => {
    const { status, spawned } = integ();
    expect(status).toBe(0);
    const withCredentials = 'credentials=AKIAIOSFODNN7EXAMPLE/integ';
    expect(spawned).toEqual([`deploy ${withCredentials}`, `deploy ${withCredentials}`, `destroy ${withCredentials}`]);
  });

  it.each(['--dryrun', 'synth', '--dry-run --force'])('refuses `%s` with a usage line, running nothing', (args) => {
    const { status, stderr, spawned } = integ(...args.split(' '));
    expect(status).toBe(2);
    expect(stderr).toMatch(/^usage: npm run integ \[-- --dry-run\]$/m);
    expect(spawned).toEqual([]);
  });
});
