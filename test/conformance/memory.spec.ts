import { InMemoryLeaseStore } from '../../lib/stores/memory.store.js';
import { describeLeaseStoreConformance } from './lease-store.conformance.js';

describeLeaseStoreConformance('InMemoryLeaseStore', () => {
  // Leases live in the instance, so "another instance over the same backend" is the same object.
  const shared = new InMemoryLeaseStore();
  return {
    leaseDurationMs: 500,
    createStore: () => shared,
    createStoreInFreshNamespace: () => new InMemoryLeaseStore(),
  };
});
