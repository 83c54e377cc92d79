import { type AcquireRequest, type AcquireResult, TransientLeaseStoreError } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory.store.js';
import { describeLeaseStoreConformance, type ReplyLoss } from './lease-store.conformance.js';

/**
 * The fault wrapper of the in-process store: between the shared acquire rule and the protocol's
 * write, it lets the write apply and then loses the answer, as a network would.
 */
class ReplyLosingMemoryStore extends InMemoryLeaseStore {
  /** Identities whose acquire reply was lost. */
  readonly lostFor = new Set<string>();
  private readonly losing = new Map<string, ReplyLoss>();

  loseNextAcquireReply(identity: string, how: ReplyLoss): void {
    this.losing.set(identity, how);
  }

  protected override take(request: AcquireRequest, leaseId: string): AcquireResult | Promise<AcquireResult> {
    const result = super.take(request, leaseId);
    const how = this.losing.get(request.identity);
    if (how === undefined) return result;
    this.losing.delete(request.identity);
    this.lostFor.add(request.identity);
    if (how === 'reset') throw new TransientLeaseStoreError('reply lost (injected by the test)');
    // Silence: the answer arrives long after its caller gave up.
    return new Promise((resolve) => setTimeout(() => resolve(result), 3_000).unref());
  }
}

describeLeaseStoreConformance('InMemoryLeaseStore', () => {
  // Leases live in the instance, so "another instance over the same backend" is the same object.
  const shared = new ReplyLosingMemoryStore();
  return {
    leaseDurationMs: 500,
    leaderState: true,
    createStore: () => shared,
    createStoreInFreshNamespace: () => new InMemoryLeaseStore(),
    createReplyLosingStore: () => {
      // One store for all: each view counts the losses of the identity it armed.
      let armed: string | undefined;
      return {
        store: shared,
        loseNextAcquireReply: (identity, how) => {
          armed = identity;
          shared.loseNextAcquireReply(identity, how);
        },
        get repliesLost() {
          return armed !== undefined && shared.lostFor.has(armed) ? 1 : 0;
        },
      };
    },
  };
});
