import { messages } from '../leader-election.messages.js';
import { type Clock, systemClock } from '../shared/clock.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  type LeaderStateEntry,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreLimits,
  type LeaseWatch,
  type RenewOptions,
  type StateCallOptions,
  toLeaseStoreError,
} from './lease-store.js';
import { decodeStateEntry, prepareStateWrite, stateKey, stateLostError } from './state-support.js';
import { StoreCalls, WatchFanOut } from './store-support.js';

interface Slot {
  holder?: string;
  leaseId?: string;
  expiresAt: number;
  term: number;
  /** Leader state by key, as the JSON a real store would keep (so a read never shares objects). */
  state: Map<string, string>;
}

/**
 * Leases in this process's memory: for tests and single-instance development. Several electors
 * (several Nest apps in one process) can share one instance; expiry uses the injected clock.
 */
export class InMemoryLeaseStore implements LeaseStore {
  readonly name = 'InMemoryLeaseStore';
  readonly limits: LeaseStoreLimits = {
    minLeaseDurationMs: 1,
    maxLeaseDurationMs: Number.MAX_SAFE_INTEGER,
    reason: 'in-memory leases accept any positive duration',
  };
  private readonly slots = new Map<string, Slot>();
  private readonly watchers = new WatchFanOut();
  private readonly calls = new StoreCalls({ name: this.name, classify: toLeaseStoreError });
  private readonly clock: Clock;

  constructor(options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
  }

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    return this.calls.acquire(request, {
      attempt: async (leaseId) => this.take(request, leaseId),
      releaseAttempt: async (leaseId) => this.free(request.election, leaseId),
    });
  }

  renew(lease: Lease, options: RenewOptions): Promise<void> {
    return this.calls.run(options.signal, async () => {
      const slot = this.slot(lease.election);
      if (!this.isHeld(slot) || slot.leaseId !== lease.leaseId) {
        throw new LeaseLostError(messages.leaseLost(lease.election));
      }
      slot.expiresAt = this.clock.now() + options.leaseDurationMs;
    });
  }

  release(lease: Lease, options: CallOptions): Promise<void> {
    return this.calls.run(options.signal, async () => this.free(lease.election, lease.leaseId));
  }

  read(election: string, options: CallOptions): Promise<LeaseInfo> {
    return this.calls.run(options.signal, async () => {
      const slot = this.slot(election);
      return this.isHeld(slot)
        ? { held: true, holder: slot.holder, term: slot.term }
        : { held: false, term: slot.term };
    });
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    return this.watchers.add(election, onMayBeFree);
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const write = prepareStateWrite(this, lease, value, options);
    return this.calls.run(options.signal, async () => this.putState(lease, write.key, write.entry));
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    return this.calls.run(options.signal, async () => {
      const stored = this.slot(election).state.get(key);
      return stored === undefined ? undefined : decodeStateEntry(this.name, election, key, stored);
    });
  }

  /**
   * The protocol's one write: take the slot under `leaseId` if free or expired. Protected so a test
   * can put a fault between the shared acquire rule and it (a reply lost after the write applied).
   */
  protected take(request: AcquireRequest, leaseId: string): AcquireResult | Promise<AcquireResult> {
    const slot = this.slot(request.election);
    if (this.isHeld(slot)) {
      const expiresInMs = slot.expiresAt - this.clock.now();
      return { acquired: false, holder: slot.holder, term: slot.term, expiresInMs };
    }
    slot.holder = request.identity;
    slot.leaseId = leaseId;
    slot.term += 1;
    slot.expiresAt = this.clock.now() + request.leaseDurationMs;
    return {
      acquired: true,
      lease: { election: request.election, holder: request.identity, leaseId, term: slot.term },
    };
  }

  /**
   * The state protocol's one write, conditional on the lease being the slot's current unexpired one.
   * Protected so a test can lose the answer after the write applied.
   */
  protected putState(lease: Lease, key: string, entry: string): void | Promise<void> {
    const slot = this.slot(lease.election);
    if (!this.isHeld(slot) || slot.leaseId !== lease.leaseId) throw stateLostError(lease);
    slot.state.set(key, entry);
  }

  private free(election: string, leaseId: string): void {
    const slot = this.slot(election);
    if (slot.leaseId !== leaseId || !this.isHeld(slot)) return;
    slot.holder = undefined;
    slot.leaseId = undefined;
    slot.expiresAt = 0;
    queueMicrotask(() => this.watchers.notify(election));
  }

  private slot(election: string): Slot {
    const slot = this.slots.get(election) ?? { expiresAt: 0, term: 0, state: new Map() };
    this.slots.set(election, slot);
    return slot;
  }

  private isHeld(slot: Slot): boolean {
    return slot.leaseId !== undefined && this.clock.now() < slot.expiresAt;
  }
}
