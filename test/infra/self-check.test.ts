import { rmSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { ENV } from '../../functions/config';
import { STAGE_FINGERPRINT_PROPERTY } from '../../infra/constructs/self-check';
import type { InventoryStack } from '../../infra/inventory-stack';
import { functionId } from '../../infra/inventory-stack';
import { STAGES } from '../../infra/stage-config';
import { ROUTES } from '../../service/routes';
import {
  buildApp,
  functionEnvironment,
  functionProperties,
  logicalIdStartingWith,
  only,
  resourcesOfType,
  synthesizeBeforeAll,
} from './synth';

const synthesized = synthesizeBeforeAll();

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; DependsOn?: string[] }>;

const ROUTE_FUNCTION_IDS = [...ROUTES.map((route) => functionId(route.operationId)), 'AuthorizerFunction'];

function resources(template: Template): Resources {
  return template.toJSON().Resources as Resources;
}

/** The one Custom::Trigger of the template, with its logical ID. */
function triggerOf(template: Template): { id: string; properties: Record<string, unknown>; dependsOn: string[] } {
  const [id, resource] = only(Object.entries(resources(template)).filter(([, r]) => r.Type === 'Custom::Trigger'));
  return { id, properties: resource.Properties ?? {}, dependsOn: resource.DependsOn ?? [] };
}

describe.each(STAGES)('Deploy self-check of the %s stage', (stage) => {
  const template = () => synthesized().templates[stage];

  it('has a trigger that invokes the current version of the self-check function and waits for its answer', () => {
    const { properties } = triggerOf(template());
    const versionId = logicalIdStartingWith(template(), 'AWS::Lambda::Version', 'SelfCheckFunctionCurrentVersion');
    expect(properties).toMatchObject({
      HandlerArn: { Ref: versionId },
      // RequestResponse: the trigger fails (and the deployment rolls back) when the function throws.
      InvocationType: 'RequestResponse',
      ExecuteOnHandlerChange: true,
    });
    expect(Number(properties.Timeout)).toBeGreaterThan(
      (functionProperties(template(), 'SelfCheckFunction').Timeout as number) * 1000,
    );
  });

  it('runs after the API deployment and its v1 stage, every route function, the authorizer and their roles', () => {
    const { dependsOn } = triggerOf(template());
    const expected = [
      logicalIdStartingWith(template(), 'AWS::ApiGateway::RestApi', 'InventoryApi'),
      logicalIdStartingWith(template(), 'AWS::ApiGateway::Deployment', 'InventoryApiDeployment'),
      logicalIdStartingWith(template(), 'AWS::ApiGateway::Stage', 'InventoryApiDeploymentStagev1'),
      logicalIdStartingWith(template(), 'AWS::ApiGateway::Authorizer', 'InventoryApiAuthorizer'),
      ...ROUTE_FUNCTION_IDS.flatMap((id) => [
        logicalIdStartingWith(template(), 'AWS::Lambda::Function', id),
        logicalIdStartingWith(template(), 'AWS::IAM::Role', `${id}Role`),
        logicalIdStartingWith(template(), 'AWS::IAM::Policy', `${id}RoleDefaultPolicy`),
      ]),
    ];
    expect(dependsOn).toEqual(expect.arrayContaining(expected));
  });

  /**
   * "Use AWS WAF to protect your REST APIs in API Gateway"
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-control-access-aws-waf.html): the web
   * ACL applies to a stage once it is associated; the check runs after the association, so it sees what clients see.
   */
  it(
    stage === 'production'
      ? 'runs after the web ACL is associated with the stage'
      : 'has no web ACL association to wait for',
    () => {
      const associations = Object.keys(resourcesOfType(template(), 'AWS::WAFv2::WebACLAssociation'));
      expect(associations).toHaveLength(stage === 'production' ? 1 : 0);
      expect(triggerOf(template()).dependsOn).toEqual(expect.arrayContaining(associations));
    },
  );

  it("calls the stage's own execute-api URL ending in /v1, and knows the keys table and nothing else", () => {
    const variables = functionEnvironment(template(), 'SelfCheckFunction');
    const restApi = logicalIdStartingWith(template(), 'AWS::ApiGateway::RestApi', 'InventoryApi');
    const stageId = logicalIdStartingWith(template(), 'AWS::ApiGateway::Stage', 'InventoryApiDeploymentStagev1');
    expect(variables[ENV.selfCheckBaseUrl]).toEqual({
      'Fn::Join': [
        '',
        [
          'https://',
          { Ref: restApi },
          expect.stringMatching(/^\.execute-api\./),
          { Ref: 'AWS::URLSuffix' },
          '/',
          { Ref: stageId },
        ],
      ],
    });
    expect(resourcesOfType(template(), 'AWS::ApiGateway::Stage')[stageId]?.StageName).toBe('v1');
    expect(variables[ENV.apiKeysTable]).toEqual({
      Ref: logicalIdStartingWith(template(), 'AWS::DynamoDB::Table', 'ApiKeysTable'),
    });
    expect(variables).not.toHaveProperty(ENV.inventoryTable);
  });

  it('runs for 6 minutes (a worst-case run with a large store, cold starts, one retry while settling) on Node 24, arm64', () => {
    expect(functionProperties(template(), 'SelfCheckFunction')).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Timeout: 360,
      Handler: 'index.handler',
    });
  });

  // What the self-check, the pre-traffic hook and the trigger's provider may do is evaluated in
  // test/infra/permissions.test.ts; here, what they are told.
  it('tells the self-check its own stack, whose status tells a rollback (which runs it again) from a deploy', () => {
    expect(functionEnvironment(template(), 'SelfCheckFunction')[ENV.stackId]).toEqual({ Ref: 'AWS::StackId' });
  });

  it("tells the pre-traffic hook the keys table for its authorizer probe's keys", () => {
    const keysTable = logicalIdStartingWith(template(), 'AWS::DynamoDB::Table', 'ApiKeysTable');
    expect(functionEnvironment(template(), 'PreTrafficHookFunction')[ENV.apiKeysTable]).toEqual({ Ref: keysTable });
  });
});

describe('Deploy self-check: when a deploy runs it again', () => {
  /** Synthesizes the app, changed by `change` first, and returns each stage's trigger fingerprint. */
  function fingerprints(
    change: (stacks: Record<string, InventoryStack>) => void = () => undefined,
    context: Record<string, unknown> = {},
  ): Record<string, unknown> {
    const { app, stacks, outdir } = buildApp(context);
    try {
      change(stacks);
      app.synth();
      return Object.fromEntries(
        STAGES.map((stage) => [
          stage,
          triggerOf(Template.fromStack(stacks[stage])).properties[STAGE_FINGERPRINT_PROPERTY],
        ]),
      );
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }

  let unchanged: Record<string, unknown>;

  beforeAll(() => {
    unchanged = fingerprints();
  });

  it('gives the trigger the same fingerprint when nothing changed, so a no-op deploy does not run it', () => {
    expect(unchanged.staging).toMatch(/^[0-9a-f]{64}$/);
    // Another synth of the same app: synthesizeApp's, which may be another file's.
    const again = Object.fromEntries(
      STAGES.map((stage) => [stage, triggerOf(synthesized().templates[stage]).properties[STAGE_FINGERPRINT_PROPERTY]]),
    );
    expect(again).toEqual(unchanged);
  });

  it("changes the fingerprint of a stage whose function configuration changed, and only that stage's", () => {
    const changed = fingerprints(() => undefined, { 'staging:petsSunsetAt': '2027-06-30' });
    expect(changed.staging).not.toBe(unchanged.staging);
    expect(changed.production).toBe(unchanged.production);
  });

  it("changes the fingerprint when only a function's IAM policy changed (no function, no API change)", () => {
    const changed = fingerprints((stacks) => {
      const list = stacks.staging?.functions.get('listInventory');
      if (list) stacks.staging?.apiKeysTable.grant(list, 'dynamodb:GetItem');
    });
    expect(changed.staging).not.toBe(unchanged.staging);
  });

  it('changes the fingerprint when only the API changed (a new deployment)', () => {
    const changed = fingerprints((stacks) =>
      stacks.staging?.api.api.root.resourceForPath('/inventory').addResource('extra').addMethod('GET'),
    );
    expect(changed.staging).not.toBe(unchanged.staging);
  });
});
