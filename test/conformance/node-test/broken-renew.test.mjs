// A store that breaks the contract must fail the exported suite: this one renews whatever lease the
// election has now, whoever asks (its renew ignores the lease id). exported-suite.spec.ts runs this
// file and checks which cases fail.
import { test } from 'node:test';
import { InMemoryLeaseStore } from '@leaderlease/nestjs';
import { leaseStoreConformance } from '@leaderlease/nestjs/store';

class RenewIgnoresLeaseId extends InMemoryLeaseStore {
  #latest = new Map();

  /**
   * @override
   * @param {import('@leaderlease/nestjs/store').AcquireRequest} request
   */
  async acquire(request) {
    const result = await super.acquire(request);
    if (result.acquired) this.#latest.set(request.election, result.lease);
    return result;
  }

  /**
   * The defect: the lease id of the caller is never compared.
   * @override
   * @param {import('@leaderlease/nestjs/store').Lease} lease
   * @param {import('@leaderlease/nestjs/store').RenewOptions} options
   */
  renew(lease, options) {
    return super.renew(this.#latest.get(lease.election) ?? lease, options);
  }
}

const store = new RenewIgnoresLeaseId();
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
