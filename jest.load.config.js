/**
 * `npm run test:load`: the load and wall-clock tests (concurrency, throttling bursts, latency bounds, the bench's
 * smoke run). They measure the machine as much as the code, so they stay out of `npm test` and run after it in CI.
 */
import { withDynamoDbLocal } from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  testTimeout: 120_000,
  // One file at a time: load tests would otherwise measure each other.
  maxWorkers: 1,
  projects: [
    {
      ...withDynamoDbLocal,
      displayName: 'load',
      testMatch: ['<rootDir>/test/load/**/*.test.ts'],
      globalSetup: '<rootDir>/test/load/global-setup.ts',
    },
  ],
};
