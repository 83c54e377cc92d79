// The exported conformance suite under node:test, against the built package, as a store author's
// test file would run it: `node --test test/conformance/node-test/memory.test.mjs` (after `npm run
// build`). exported-suite.spec.ts runs it and checks it passes within its time budget.
import { test } from 'node:test';
import { InMemoryLeaseStore } from '@leaderlease/nestjs';
import { leaseStoreConformance } from '@leaderlease/nestjs/store';

// In-memory leases live in the instance: every "client" is the same store.
const store = new InMemoryLeaseStore();
const cases = leaseStoreConformance({
  createStore: () => store,
  leaseDurationMs: 1_000,
  leaderState: true,
  handover: true,
  records: true,
  renewWith: true,
  push: true,
});

for (const c of cases) test(c.name, { skip: c.skip, timeout: c.timeoutMs }, () => c.run());
