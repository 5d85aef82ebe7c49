import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CfnResource, Stack } from 'aws-cdk-lib';
import { stackName } from '../service/names';
import { PROJECT_ROOT } from './bundling';
import { createInventoryApp } from './constructs/inventory-app';
import { InventoryFunction } from './constructs/inventory-function';

/** The feature flags and settings of cdk.json, so callers synthesize what `npm run synth` does. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  return cdkJson.context;
}

/** One function's code as `cdk deploy` would upload it. */
export interface DeployedBundle {
  /** The module under `functions/handlers/`. */
  handler: string;
  /** The asset directory's `index.js`, the file Lambda loads. */
  file: string;
  bytes: number;
}

/** The deployed functions' bundles in a temporary cloud assembly; `dispose` removes it. */
export interface DeployedBundles {
  bundles: DeployedBundle[];
  /** The bundle of one handler module. */
  bundle(handler: string): DeployedBundle;
  dispose(): void;
}

/** Bundles the staging stack's functions as a deploy does (both stages bundle the same code), for tests and bench. */
export function synthesizeDeployedBundles(): DeployedBundles {
  const outdir = mkdtempSync(join(tmpdir(), 'petstore-bundles-'));
  const staging = stackName('staging');
  const { app, stacks } = createInventoryApp(
    {
      outdir,
      context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [staging], 'aws:cdk:enable-asset-metadata': true },
      // The built-in validation reads the templates and never changes the bundles; `npm run synth` and
      // test/infra/nag.test.ts run it.
      builtinCloudFormationValidation: false,
    },
    {},
  );
  try {
    app.synth();
  } catch (error) {
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  }
  const template = JSON.parse(readFileSync(join(outdir, `${staging}.template.json`), 'utf8')) as {
    Resources: Record<string, { Metadata?: Record<string, string> }>;
  };
  const stack = stacks.staging;
  const bundles = stack.node
    .findAll()
    .filter((construct): construct is InventoryFunction => construct instanceof InventoryFunction)
    .map((fn) => {
      const logicalId = Stack.of(fn).resolve((fn.node.defaultChild as CfnResource).logicalId) as string;
      const assetPath = template.Resources[logicalId]?.Metadata?.['aws:asset:path'];
      if (!assetPath) throw new Error(`No bundled asset for ${fn.node.path}`);
      const file = join(outdir, assetPath, 'index.js');
      return { handler: fn.handlerModule, file, bytes: statSync(file).size };
    });
  return {
    bundles,
    bundle: (handler) => {
      const found = bundles.find((candidate) => candidate.handler === handler);
      if (!found) throw new Error(`No deployed function runs ${handler}`);
      return found;
    },
    dispose: () => rmSync(outdir, { recursive: true, force: true }),
  };
}
