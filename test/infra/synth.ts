import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { createInventoryApp, type InventoryApp } from '../../infra/constructs/inventory-app';
import type { StageName } from '../../infra/stage-config';
import { cdkJsonContext } from '../../infra/synthesized-assets';

/** A synthesized app: the templates of both stages and of the account stacks, and the cdk-nag report. */
export interface SynthesizedApp extends InventoryApp {
  templates: Record<StageName, Template>;
  /** The account stacks' templates, by construct ID (`PetStoreInventory-account-<region>[-<account>]`). */
  accountTemplates: Record<string, Template>;
  /** The cloud assembly's validation report (cdk-nag findings that were not acknowledged). */
  validationReport: { pluginReports: { pluginName: string; violations?: { ruleName: string }[] }[] };
  /** Removes the temporary cloud assembly. */
  dispose(): void;
}

/** How a test app is synthesized beyond its context. */
export interface SynthOptions {
  /**
   * Runs aws-cdk-lib's built-in CloudFormation validation (the default rules `npm run synth` checks the templates
   * against) as well as cdk-nag. It reads the templates and never changes them, and its WebAssembly engine takes
   * most of a synth's time (seconds per file), so only the test of the validation report (nag.test.ts) asks for it.
   */
  cloudFormationValidation?: boolean;
}

/** Builds the app as {@link synthesizeApp} does, without synthesizing it yet; the caller removes `outdir`. */
export function buildApp(
  extraContext: Record<string, unknown> = {},
  { cloudFormationValidation = false }: SynthOptions = {},
): InventoryApp & { outdir: string } {
  const outdir = mkdtempSync(join(tmpdir(), 'petstore-infra-test-'));
  const inventoryApp = createInventoryApp(
    {
      outdir,
      context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...extraContext },
      builtinCloudFormationValidation: cloudFormationValidation,
    },
    {},
  );
  return { ...inventoryApp, outdir };
}

/**
 * Synthesizes both stages as `npm run synth` does, with cdk-nag, but without bundling the functions (the asset
 * contents do not change the template), without the built-in CloudFormation validation unless asked for, and with
 * no AWS environment variables, as on a machine with no AWS config.
 */
export function synthesizeApp(extraContext: Record<string, unknown> = {}, options: SynthOptions = {}): SynthesizedApp {
  const { outdir, ...inventoryApp } = buildApp(extraContext, options);
  inventoryApp.app.synth();
  return {
    ...inventoryApp,
    templates: {
      staging: Template.fromStack(inventoryApp.stacks.staging),
      production: Template.fromStack(inventoryApp.stacks.production),
    },
    accountTemplates: Object.fromEntries(
      [...inventoryApp.accountStacks.values()].map((stack) => [stack.node.id, Template.fromStack(stack)]),
    ),
    validationReport: JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')),
    dispose: () => rmSync(outdir, { recursive: true, force: true }),
  };
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

/** A resource of a synthesized template as the tests read it. */
export type RawResource = {
  Type: string;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  UpdatePolicy?: Record<string, unknown>;
  Properties: Record<string, unknown>;
};

/** One statement of an IAM policy document. */
export interface PolicyStatement {
  Action: string | string[];
  Effect: string;
  Resource: unknown;
}

/** One API Gateway method of a template, with its full resource path. */
export interface TemplateMethod {
  logicalId: string;
  path: string;
  httpMethod: string;
  authorizationType: string;
  authorizerId: unknown;
  integration: {
    Type: string;
    Uri?: unknown;
    ResponseTransferMode?: string;
    TimeoutInMillis?: number;
    RequestTemplates?: Record<string, string>;
    PassthroughBehavior?: string;
    IntegrationResponses?: {
      StatusCode: string;
      SelectionPattern?: string;
      ResponseParameters?: Record<string, string>;
      ResponseTemplates?: Record<string, string>;
    }[];
  };
}

/** Every method of the template's REST API, with the path rebuilt from the resource tree. */
export function templateMethods(template: Template): TemplateMethod[] {
  const resources = template.toJSON().Resources as Resources;
  const pathOf = (ref: unknown): string => {
    const id = (ref as { Ref?: string }).Ref;
    if (id === undefined) return ''; // the root resource (Fn::GetAtt RootResourceId)
    const resource = resources[id];
    const props = resource?.Properties as { ParentId: unknown; PathPart: string };
    return `${pathOf(props.ParentId)}/${props.PathPart}`;
  };
  return Object.entries(resources)
    .filter(([, resource]) => resource.Type === 'AWS::ApiGateway::Method')
    .map(([logicalId, resource]) => {
      const props = resource.Properties as Record<string, unknown>;
      return {
        logicalId,
        path: pathOf(props.ResourceId) || '/',
        httpMethod: props.HttpMethod as string,
        authorizationType: props.AuthorizationType as string,
        authorizerId: props.AuthorizerId,
        integration: props.Integration as TemplateMethod['integration'],
      };
    });
}

/** Resources of one type, by logical ID. */
export function resourcesOfType(template: Template, type: string): Record<string, Record<string, unknown>> {
  const resources = template.toJSON().Resources as Resources;
  return Object.fromEntries(
    Object.entries(resources)
      .filter(([, resource]) => resource.Type === type)
      .map(([id, resource]) => [id, resource.Properties ?? {}]),
  );
}

/** The logical ID of the only resource of `type` whose logical ID starts with `prefix`. */
export function logicalIdStartingWith(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(resourcesOfType(template, type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`Expected one ${type} starting with ${prefix}, found ${ids.join(', ')}`);
  return ids[0] as string;
}

/** The one element of a list; throws (failing the test) when there is not exactly one. */
export function only<T>(items: readonly T[]): T {
  if (items.length !== 1) throw new Error(`Expected exactly one element, found ${items.length}`);
  return items[0] as T;
}

/** Every statement of every IAM policy attached to the role of the function with logical ID `functionId`. */
export function roleStatements(template: Template, functionId: string): PolicyStatement[] {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionId] as { Role: { 'Fn::GetAtt': [string] } };
  const roleRef = JSON.stringify({ Ref: fn.Role['Fn::GetAtt'][0] });
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Roles as unknown[]).some((role) => JSON.stringify(role) === roleRef))
    .flatMap((policy) => (policy.PolicyDocument as { Statement: PolicyStatement[] }).Statement);
}
