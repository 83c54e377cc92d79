// The push-handover conformance suite against the in-memory store (its `watch` is in-process).
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { describePushHandoverConformance } from './push.conformance.js';

// One shared instance: in-memory leases (and their watchers) exist only within one store.
const store = new InMemoryLeaseStore();

describePushHandoverConformance('InMemoryLeaseStore', () => ({
  leaseDurationMs: 1_000,
  createStore: () => store,
}));
