// The chaos harness: real fixture processes (test/chaos/fixture/app.ts), each talking to Azurite
// through its own FaultProxy, all writing one ledger that the checker reads afterwards.
export * from './harness/bounds.js';
export * from './harness/checks.js';
export * from './harness/instance.js';
export * from './harness/results.js';
export * from './harness/scenario.js';
export * from './harness/suite.js';
