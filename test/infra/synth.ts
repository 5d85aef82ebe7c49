import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { createInventoryApp, type InventoryApp } from '../../infra/constructs/inventory-app';
import { STAGES, type StageName } from '../../infra/stage-config';
import { cdkJsonContext } from '../../infra/synthesized-assets';
import { stackName } from '../../service/names';
import { SYNTH_CACHE_ENV } from './global-setup';

/** A synthesized app: the templates of both stages and of the account stacks, and the cdk-nag report. */
export interface SynthesizedApp extends InventoryApp {
  templates: Record<StageName, Template>;
  /** The account stacks' templates, by construct ID (`PetStoreInventory-account-<region>[-<account>]`). */
  accountTemplates: Record<string, Template>;
  /** The cloud assembly's validation report (cdk-nag findings that were not acknowledged). */
  validationReport: { pluginReports: { pluginName: string; violations?: { ruleName: string }[] }[] };
  /** The cloud assembly's directory, until `dispose`. */
  assembly: string;
  /** Removes the app's own cloud assembly; one read from the run's cache stays until the run ends. */
  dispose(): void;
}

interface Outdir {
  /** The cloud assembly's directory. */
  outdir: string;
}

/** Builds the app as {@link synthesizeApp} does, without synthesizing it yet; the caller removes `outdir`. */
export function buildApp(extraContext: Record<string, unknown> = {}): InventoryApp & Outdir {
  const outdir = mkdtempSync(join(tmpdir(), 'petstore-infra-test-'));
  try {
    const inventoryApp = createInventoryApp(
      // aws-cdk-lib's built-in CloudFormation validation reads the templates and never changes them, and its
      // WebAssembly engine takes seconds: nag.test.ts runs it once, on the default context's templates.
      { outdir, context: appContext(extraContext), builtinCloudFormationValidation: false },
      {},
    );
    return { ...inventoryApp, outdir };
  } catch (error) {
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The context a test app is built with: cdk.json's, no bundling, no stack traces in the construct metadata (they go
 * to the cloud assembly's manifest, never into a template, and capturing them under Jest's source maps costs a third
 * of a synth), then the test's own.
 */
function appContext(extraContext: Record<string, unknown>): Record<string, unknown> {
  return {
    ...cdkJsonContext(),
    'aws:cdk:bundling-stacks': [],
    'aws:cdk:disable-stack-trace': true,
    'aws:cdk:disable-creation-stack-traces': true,
    ...extraContext,
  };
}

/**
 * Synthesizes both stages as `npm run synth` does, with cdk-nag, but without bundling the functions (the asset
 * contents do not change the template), without the built-in CloudFormation validation, and with no AWS environment
 * variables, as on a machine with no AWS config.
 *
 * In a jest run of the infra project (test/infra/global-setup.ts) each context is synthesized once: the first file
 * that asks keeps a copy of the cloud assembly, and later files read its templates and validation report instead of
 * synthesizing again. Their `app`, `stacks` and `accountStacks` are built (never synthesized) when first read, so use
 * `templates` for what the templates say.
 */
export function synthesizeApp(extraContext: Record<string, unknown> = {}): SynthesizedApp {
  const cacheRoot = process.env[SYNTH_CACHE_ENV];
  if (cacheRoot === undefined) return synthesizeFresh(extraContext);
  const key = createHash('sha256')
    .update(stableJson(appContext(extraContext)))
    .digest('hex')
    .slice(0, 16);
  const cached = join(cacheRoot, key);
  if (existsSync(cached)) return readSynthesized(cached, extraContext);
  const synthesized = synthesizeFresh(extraContext);
  publish(synthesized.outdir, cached);
  return synthesized;
}

/**
 * Synthesizes the app (as {@link synthesizeApp}) in a beforeAll of the file or describe that calls it, and disposes
 * of it in an afterAll; tests read it through the returned function.
 */
export function synthesizeBeforeAll(extraContext: Record<string, unknown> = {}): () => SynthesizedApp {
  let synthesized: SynthesizedApp | undefined;
  beforeAll(() => {
    synthesized = synthesizeApp(extraContext);
  });
  afterAll(() => synthesized?.dispose());
  return () => {
    if (synthesized === undefined) throw new Error('The app is synthesized in beforeAll: read it inside a test');
    return synthesized;
  };
}

/** Synthesizes the app into a cloud assembly of its own, which `dispose()` removes. */
function synthesizeFresh(extraContext: Record<string, unknown>): SynthesizedApp & Outdir {
  const { outdir, ...inventoryApp } = buildApp(extraContext);
  try {
    inventoryApp.app.synth();
    return {
      ...inventoryApp,
      outdir,
      templates: {
        staging: Template.fromStack(inventoryApp.stacks.staging),
        production: Template.fromStack(inventoryApp.stacks.production),
      },
      accountTemplates: Object.fromEntries(
        [...inventoryApp.accountStacks.values()].map((stack) => [stack.node.id, Template.fromStack(stack)]),
      ),
      validationReport: readValidationReport(outdir),
      assembly: outdir,
      dispose: () => rmSync(outdir, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  }
}

/** Copies a cloud assembly to `dir` whole or not at all; when another worker got there first, its copy stays. */
function publish(outdir: string, dir: string): void {
  const staging = mkdtempSync(`${dir}.partial-`);
  cpSync(outdir, staging, { recursive: true });
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** A synthesized app from a cached cloud assembly; its constructs are built when first read. */
function readSynthesized(dir: string, extraContext: Record<string, unknown>): SynthesizedApp {
  const stageStacks = new Set<string>(STAGES.map(stackName));
  const assembly = new CloudAssembly(dir);
  const templateOf = (id: string) => Template.fromJSON(assembly.getStackArtifact(id).template);
  let built: InventoryApp | undefined;
  const constructs = (): InventoryApp => {
    if (built === undefined) {
      const { outdir, ...inventoryApp } = buildApp(extraContext);
      rmSync(outdir, { recursive: true, force: true });
      built = inventoryApp;
    }
    return built;
  };
  return {
    get app() {
      return constructs().app;
    },
    get stacks() {
      return constructs().stacks;
    },
    get accountStacks() {
      return constructs().accountStacks;
    },
    templates: { staging: templateOf(stackName('staging')), production: templateOf(stackName('production')) },
    accountTemplates: Object.fromEntries(
      assembly.stacks
        .filter((stack) => !stageStacks.has(stack.hierarchicalId))
        .map((stack) => [stack.hierarchicalId, Template.fromJSON(stack.template)]),
    ),
    validationReport: readValidationReport(dir),
    assembly: dir,
    // The cache outlives the file: test/infra/global-teardown.ts removes it after the run.
    dispose: () => undefined,
  };
}

function readValidationReport(dir: string): SynthesizedApp['validationReport'] {
  return JSON.parse(readFileSync(join(dir, 'validation-report.json'), 'utf8'));
}

/** JSON with every object's keys sorted, so that the same context gives the same cache key whatever its order. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  );
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
  Condition?: unknown;
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

/** The properties of the only function whose logical ID starts with `id` (its construct ID). */
export function functionProperties(template: Template, id: string): Record<string, unknown> {
  const logicalId = logicalIdStartingWith(template, 'AWS::Lambda::Function', id);
  return resourcesOfType(template, 'AWS::Lambda::Function')[logicalId] as Record<string, unknown>;
}

/** The environment variables of the function whose logical ID starts with `id`. */
export function functionEnvironment(template: Template, id: string): Record<string, unknown> {
  return (functionProperties(template, id).Environment as { Variables: Record<string, unknown> }).Variables;
}
