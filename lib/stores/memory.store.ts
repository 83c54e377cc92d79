import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../shared/clock.js';
import { messages } from '../leader-election.messages.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreLimits,
  type LeaseWatch,
  type RenewOptions,
} from './lease-store.js';
import { throwIfAborted } from '../shared/abort.js';

interface Slot {
  holder?: string;
  leaseId?: string;
  expiresAt: number;
  term: number;
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
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly clock: Clock;

  constructor(options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    throwIfAborted(request.signal);
    const slot = this.slot(request.election);
    if (this.isHeld(slot)) return { acquired: false, holder: slot.holder, term: slot.term };
    slot.holder = request.identity;
    slot.leaseId = randomUUID();
    slot.term += 1;
    slot.expiresAt = this.clock.now() + request.leaseDurationMs;
    return {
      acquired: true,
      lease: { election: request.election, holder: request.identity, leaseId: slot.leaseId, term: slot.term },
    };
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    throwIfAborted(options.signal);
    const slot = this.slot(lease.election);
    if (!this.isHeld(slot) || slot.leaseId !== lease.leaseId) {
      throw new LeaseLostError(messages.leaseLost(lease.election));
    }
    slot.expiresAt = this.clock.now() + options.leaseDurationMs;
  }

  async release(lease: Lease, options: CallOptions): Promise<void> {
    throwIfAborted(options.signal);
    const slot = this.slot(lease.election);
    if (slot.leaseId !== lease.leaseId || !this.isHeld(slot)) return;
    slot.holder = undefined;
    slot.leaseId = undefined;
    slot.expiresAt = 0;
    for (const listener of this.watchers.get(lease.election) ?? []) queueMicrotask(listener);
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    throwIfAborted(options.signal);
    const slot = this.slot(election);
    return this.isHeld(slot) ? { held: true, holder: slot.holder, term: slot.term } : { held: false, term: slot.term };
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    const listeners = this.watchers.get(election) ?? new Set();
    this.watchers.set(election, listeners);
    listeners.add(onMayBeFree);
    return {
      close: async () => {
        listeners.delete(onMayBeFree);
      },
    };
  }

  private slot(election: string): Slot {
    const slot = this.slots.get(election) ?? { expiresAt: 0, term: 0 };
    this.slots.set(election, slot);
    return slot;
  }

  private isHeld(slot: Slot): boolean {
    return slot.leaseId !== undefined && this.clock.now() < slot.expiresAt;
  }
}
