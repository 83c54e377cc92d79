// The in-process e2e suite against Nest 11 (CommonJS), whose packages live in test/nest11/node_modules
// because the root can hold only one Nest major. Every @nestjs/* import — ours, the tests', and the
// ones inside Nest 11 itself — is mapped to these copies, and so are reflect-metadata and rxjs, so
// there is exactly one copy of each in the run. Run through ./run.mjs.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import base from '../../jest.config.js';

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, 'node_modules');

export default {
  ...base,
  rootDir: join(here, '../..'),
  displayName: 'nest11',
  // The in-process specs only: the process/demo specs start children that import the root's Nest 12.
  testMatch: [
    ...[
      'jobs',
      'routes',
      'service-and-hooks',
      'module',
      'health',
      'nest-version',
      'metrics',
      'stuck-leader',
      'elections',
    ].map((name) => `<rootDir>/test/e2e/${name}.spec.ts`),
    // The testing kit is what users' Nest 11 unit tests load.
    '<rootDir>/test/testing/*.spec.ts',
  ],
  moduleNameMapper: {
    ...base.moduleNameMapper,
    '^@nestjs/(.*)$': `${modules}/@nestjs/$1`,
    '^reflect-metadata$': `${modules}/reflect-metadata`,
    '^rxjs$': `${modules}/rxjs`,
    '^rxjs/(.*)$': `${modules}/rxjs/$1`,
  },
  // No servers needed: these specs use the in-memory store.
  globalSetup: undefined,
  globalTeardown: undefined,
};
