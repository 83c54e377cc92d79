// The conformance suite of the LeaseStore contract, for any store and any test runner: one call
// returns plain cases that a Jest, Vitest or node:test file registers in two lines. Our own stores
// run through it too (test/conformance/*.spec.ts).
import assert from 'node:assert/strict';
import {
  supportsHandover,
  supportsRecords,
  supportsRenewWith,
  supportsState,
} from '../stores/lease-store.capabilities.js';
import type { ConformanceCase, LeaseStoreConformanceOptions } from './conformance.types.js';
import { defineCase, FAST_TIMEOUT_MS, targetOf } from './conformance-kit.js';
import { faultCases } from './faults.cases.js';
import { handoverCases } from './handover.cases.js';
import { handoverSlotCases } from './handover-slot.cases.js';
import { leaseCases } from './lease.cases.js';
import { leaseExpiryCases } from './lease-expiry.cases.js';
import { pushCases } from './push.cases.js';
import { recordCases } from './records.cases.js';
import { renewWithCases } from './renew-with.cases.js';
import { stateCases } from './state.cases.js';

/**
 * The conformance suite of the `LeaseStore` contract, as plain cases for any test runner. Every case
 * uses its own elections, opens its own stores through `options.createStore` and closes them when it
 * ends; timers are real. Cases of a capability the options do not declare (`leaderState`, `handover`,
 * `records`, `push`, `renewWith`), or that need a fixture they do not give, come back with `skip: true`.
 *
 * @example
 * ```ts fragment
 * import { test } from 'node:test';
 * import { leaseStoreConformance } from '@leaderlease/nestjs/store';
 *
 * const cases = leaseStoreConformance({ createStore: () => new MyLeaseStore(url), leaseDurationMs: 1_000 });
 * for (const c of cases) test(c.name, { skip: c.skip, timeout: c.timeoutMs }, () => c.run());
 * ```
 * @throws RangeError or TypeError when an option is invalid, naming it and its allowed range.
 */
export function leaseStoreConformance(options: LeaseStoreConformanceOptions): ConformanceCase[] {
  const t = targetOf(options);
  const declared = defineCase(
    t,
    'capabilities: the store implements exactly the capabilities the options declare',
    FAST_TIMEOUT_MS,
    async (s) => {
      const store = await s.newStore();
      assert.equal(supportsState(store), Boolean(t.leaderState), `leaderState is ${Boolean(t.leaderState)}`);
      assert.equal(supportsHandover(store), Boolean(t.handover), `handover is ${Boolean(t.handover)}`);
      assert.equal(supportsRecords(store), Boolean(t.records), `records is ${Boolean(t.records)}`);
      assert.equal(typeof store.watch === 'function', Boolean(t.push), `push is ${Boolean(t.push)}`);
      assert.equal(supportsRenewWith(store), Boolean(t.renewWith), `renewWith is ${Boolean(t.renewWith)}`);
      // A half-declared capability is a bug too: all of its methods, or none.
      const some = (names: string[]) => names.some((name) => typeof Reflect.get(store, name) === 'function');
      if (!t.leaderState) assert.ok(!some(['writeState', 'readState']), 'a state method without the capability');
      if (!t.handover) {
        assert.ok(
          !some(['requestHandover', 'readHandover', 'clearHandover']),
          'a handover method without the capability',
        );
      }
      if (!t.records) assert.ok(!some(['readRecord', 'writeRecord']), 'a record method without the capability');
    },
  );
  return [
    declared,
    ...leaseCases(t),
    ...leaseExpiryCases(t),
    ...stateCases(t),
    ...handoverCases(t),
    ...handoverSlotCases(t),
    ...recordCases(t),
    ...renewWithCases(t),
    ...pushCases(t),
    ...faultCases(t),
  ];
}
