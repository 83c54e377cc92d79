// @ts-check
// Runs TypeScript sources in a plain Node process, compiled on the fly by swc with the same
// settings as Jest (legacy decorators + decorator metadata, NodeNext-style `./x.js` imports mapped
// back to `./x.ts`). For child processes of tests (fixtures, chaos instances, the sample app):
//
//   node --import ./test/support/swc-register.mjs test/fixtures/leader-app.ts
import { register } from 'node:module';

register('./swc-loader.mjs', import.meta.url);
