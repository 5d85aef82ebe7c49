/**
 * `npm test`: three projects, unit (no network), integration (a real DynamoDB Local started once by globalSetup) and
 * infra (CloudFormation synthesized offline), none of which asserts on wall-clock time. Load and timing tests live
 * in jest.load.config.js (`npm run test:load`). ESM throughout: middy 7 ships ESM only, so Jest runs with
 * --experimental-vm-modules (see package.json) and @swc/jest strips types without bundling.
 */
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

export const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/helpers/quiet-env.ts', '<rootDir>/test/helpers/lambda-runtime.ts'],
};

/** Projects whose tests reach the one DynamoDB Local that globalSetup starts. */
export const withDynamoDbLocal = {
  ...common,
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
};

/** @type {import('jest').Config} */
export default {
  testTimeout: 30_000,
  // Two workers even on two cores (Jest's default would be one): most integration time is spent waiting on DynamoDB
  // Local, npm start processes and time-outs, which a second file fills.
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/helpers/slow-first.ts',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...withDynamoDbLocal, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    {
      ...common,
      displayName: 'infra',
      testMatch: ['<rootDir>/test/infra/**/*.test.ts'],
      // One synth per context for the whole run, shared by the files (test/infra/synth.ts).
      globalSetup: '<rootDir>/test/infra/global-setup.ts',
      globalTeardown: '<rootDir>/test/infra/global-teardown.ts',
    },
  ],
};
