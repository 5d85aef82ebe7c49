import { join } from 'node:path';
import { type BundlingOptions, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';

/** Repository root (infra/ lives one level below it). */
export const PROJECT_ROOT = join(import.meta.dirname, '..');

/** The module that replaces the SDK's default credential chain in Lambda bundles (see its TSDoc). */
export const LAMBDA_CREDENTIALS_MODULE = join(PROJECT_ROOT, 'functions', 'store', 'lambda-credentials.ts');

/**
 * How every function is bundled (locally with esbuild, never Docker). CJS with `module` before `main` gives the
 * smallest bundle that loads fastest; the SDK is bundled so each function ships the version it was tested with,
 * with credentials read from the environment only (the alias). The linked source map ships in each asset
 * (`index.js.map`) but is not loaded at run time: `--enable-source-maps` would cost every cold start, and more an
 * instance's first failed DynamoDB call (measured in docs/performance.md, "Source maps"); a logged stack is mapped
 * to the TypeScript afterwards with `npm run cli -- stack map` (docs/deploying.md).
 */
export const BUNDLING: BundlingOptions = {
  minify: true,
  target: 'node24',
  format: OutputFormat.CJS,
  mainFields: ['module', 'main'],
  sourceMap: true,
  sourceMapMode: SourceMapMode.DEFAULT,
  sourcesContent: false,
  bundleAwsSDK: true,
  externalModules: [],
  forceDockerBundling: false,
  esbuildArgs: { '--alias:@aws-sdk/credential-provider-node': LAMBDA_CREDENTIALS_MODULE },
};

/** The entry file of a handler module. */
export function handlerEntry(handler: string): string {
  return join(PROJECT_ROOT, 'functions', 'handlers', `${handler}.ts`);
}
