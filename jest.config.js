// Jest runs in native ESM mode (Nest 12 is ESM-only); @swc/jest compiles TypeScript with the
// repo's .swcrc (legacy decorators and decorator metadata, which Nest's DI needs).
import { swcOptions } from './scripts/lib/swc-options.mjs';

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swcOptions()] },
  // Sources import siblings as `./x.js` (NodeNext); map them back to the .ts file.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  // test/apps holds whole Nest apps with their own installs and test runners (scripts/test-apps.mjs).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/apps/'],
  modulePathIgnorePatterns: ['<rootDir>/test/apps/'],
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 60_000,
  // Most suites wait on timers and child processes, not the CPU: two workers fit a 2-core machine.
  maxWorkers: 2,
};
