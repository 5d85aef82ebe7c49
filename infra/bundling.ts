import { join } from 'node:path';
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/** Repository root (infra/ lives one level below it). */
export const PROJECT_ROOT = join(import.meta.dirname, '..');

/**
 * How every function is bundled: CJS with `module` before `main` loads fastest; the SDK ships as tested, credentials
 * from the environment only (docs/performance.md, "The AWS SDK in the functions"); the source map ships, unloaded.
 */
export const BUNDLING: BundlingOptions = {
  minify: true,
  target: 'node24',
  format: OutputFormat.CJS,
  mainFields: ['module', 'main'],
  sourceMap: true,
  sourcesContent: false,
  bundleAwsSDK: true,
  externalModules: [],
  esbuildArgs: {
    '--alias:@aws-sdk/credential-provider-node': join(PROJECT_ROOT, 'functions', 'store', 'lambda-credentials.ts'),
  },
};
