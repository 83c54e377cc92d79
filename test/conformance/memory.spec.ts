// InMemoryLeaseStore through the exported conformance suite (`leaseStoreConformance` of
// `@leaderlease/nestjs/store`), registered the way a store author registers it.

import { TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { leaseStoreConformance, type ReplyLoss } from '../../lib/store.js';
import type { AcquireRequest, AcquireResult, Lease } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

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

  /** Lose the answer to the next state write whose entry carries `marker`, after it applied. */
  loseNextStateReply(marker: string, how: ReplyLoss): void {
    this.losingState = { marker, how };
  }

  statesLost = 0;
  private losingState?: { marker: string; how: ReplyLoss };

  protected override putState(lease: Lease, key: string, entry: string): void | Promise<void> {
    super.putState(lease, key, entry);
    const losing = this.losingState;
    if (!losing || !entry.includes(losing.marker)) return;
    this.losingState = undefined;
    this.statesLost += 1;
    if (losing.how === 'reset') throw new TransientLeaseStoreError('reply lost (injected by the test)');
    return new Promise((resolve) => setTimeout(resolve, 3_000).unref());
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

// Leases live in the instance, so "another instance over the same backend" is the same object.
const shared = new ReplyLosingMemoryStore();

const cases = leaseStoreConformance({
  leaseDurationMs: 500,
  leaderState: true,
  handover: true,
  records: true,
  renewWith: true,
  push: true,
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
      loseNextReplyContaining: (marker, how) => {
        armed = undefined;
        shared.loseNextStateReply(marker, how);
      },
      get repliesLost() {
        if (armed === undefined) return shared.statesLost;
        return shared.lostFor.has(armed) ? 1 : 0;
      },
    };
  },
});

describe('LeaseStore conformance: InMemoryLeaseStore', () => {
  for (const c of cases) (c.skip ? test.skip : c.concurrent ? test.concurrent : test)(c.name, c.run, c.timeoutMs);
});
