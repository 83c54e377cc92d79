import { type AcquireRequest, type AcquireResult, TransientLeaseStoreError } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory.store.js';
import { describeLeaseStoreConformance } from './lease-store.conformance.js';

/**
 * The fault wrapper of the in-process store: between the shared acquire rule and the protocol's
 * write, it lets the write apply and then loses the answer, as a network would.
 */
class ReplyLosingMemoryStore extends InMemoryLeaseStore {
  repliesLost = 0;
  private losing?: string;

  loseNextAcquireReply(identity: string): void {
    this.losing = identity;
  }

  protected override take(request: AcquireRequest, leaseId: string): AcquireResult {
    const result = super.take(request, leaseId);
    if (request.identity !== this.losing) return result;
    this.losing = undefined;
    this.repliesLost += 1;
    throw new TransientLeaseStoreError('reply lost (injected by the test)');
  }
}

describeLeaseStoreConformance('InMemoryLeaseStore', () => {
  // Leases live in the instance, so "another instance over the same backend" is the same object.
  const shared = new ReplyLosingMemoryStore();
  return {
    leaseDurationMs: 500,
    createStore: () => shared,
    createStoreInFreshNamespace: () => new InMemoryLeaseStore(),
    createReplyLosingStore: () => ({
      store: shared,
      loseNextAcquireReply: (identity) => shared.loseNextAcquireReply(identity),
      get repliesLost() {
        return shared.repliesLost;
      },
    }),
  };
});
