import { join } from 'node:path';
import { type BundlingOptions, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { AUTHORIZER_HANDLER, ROUTES } from '../functions/routes';

/** Repository root (infra/ lives one level below it). */
export const PROJECT_ROOT = join(import.meta.dirname, '..');

/** The esbuild target: the Lambda runtime is Node 24. */
export const BUNDLE_TARGET = 'node24';

/**
 * How every function is bundled (locally with esbuild, never Docker). CJS with `module` before `main` gives the
 * smallest bundle that loads fastest (see docs/deploying.md); the SDK is bundled so each function ships the version
 * it was tested with; the linked source map makes stack traces point at the TypeScript once NODE_OPTIONS has
 * `--enable-source-maps` (see {@link BUNDLED_FUNCTION_ENVIRONMENT}).
 */
export const BUNDLING: BundlingOptions = {
  minify: true,
  target: BUNDLE_TARGET,
  format: OutputFormat.CJS,
  mainFields: ['module', 'main'],
  sourceMap: true,
  sourceMapMode: SourceMapMode.DEFAULT,
  sourcesContent: false,
  bundleAwsSDK: true,
  externalModules: [],
  forceDockerBundling: false,
};

/** Environment every bundled function needs for its bundle to behave as built. */
export const BUNDLED_FUNCTION_ENVIRONMENT: Readonly<Record<string, string>> = {
  NODE_OPTIONS: '--enable-source-maps',
};

/** One function's bundle entry. */
export interface HandlerEntry {
  /** The module name under `functions/handlers/`. */
  handler: string;
  /** Absolute path of the entry file. */
  entry: string;
}

/** The entry file of a handler module. */
export function handlerEntry(handler: string): string {
  return join(PROJECT_ROOT, 'functions', 'handlers', `${handler}.ts`);
}

/** Every function the stack deploys (one per route, plus the authorizer), with its entry file. */
export function handlerEntries(): HandlerEntry[] {
  const names = [...new Set([...ROUTES.map((route) => route.handler), AUTHORIZER_HANDLER])];
  return names.map((handler) => ({ handler, entry: handlerEntry(handler) }));
}

/**
 * The same bundling as esbuild `build()` options, for tools that bundle outside CDK (the benchmark): what
 * NodejsFunction passes to esbuild for {@link BUNDLING}.
 */
export function esbuildOptions(entry: string, outfile: string) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node' as const,
    target: BUNDLE_TARGET,
    format: 'cjs' as const,
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: 'linked' as const,
    sourcesContent: false,
    external: [],
  };
}
