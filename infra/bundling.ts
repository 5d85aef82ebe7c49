import { join } from 'node:path';
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/** Repository root (infra/ lives one level below it). */
export const PROJECT_ROOT = join(import.meta.dirname, '..');

/**
 * How every function is bundled (esbuild, never Docker): CJS with `module` before `main` loads fastest. The SDK is
 * bundled, so each function ships the version it was tested with, with credentials from the environment only
 * (functions/store/lambda-credentials.ts). The source map ships but is not loaded, which would cost every cold start
 * (docs/performance.md, "Source maps"); `npm run cli -- stack map` maps a logged stack.
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
