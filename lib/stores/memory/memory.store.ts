import { type Clock, systemClock } from '../../shared/clock.js';
import { LeaseLostError, toLeaseStoreError } from '../../shared/errors.js';
import {
  decodeHandoverRequest,
  decodeLeaseMeta,
  encodeHandoverRequest,
  encodeLeaseMeta,
  releaseReservation,
} from '../handover-support.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  HandoverRequest,
  LeaderStateEntry,
  Lease,
  LeaseInfo,
  LeaseMeta,
  LeaseStore,
  LeaseStoreLimits,
  LeaseWatch,
  RecordWriteOptions,
  ReleaseOptions,
  RenewOptions,
  RenewWithOptions,
  RenewWithReply,
  SharedRecord,
  StateCallOptions,
} from '../lease-store.js';
import { spreadRequestYields } from '../lease-store.spread-rule.js';
import { prepareRecordWrite, recordKey } from '../record-support.js';
import { prepareRenewal, renewalReply } from '../renew-with-support.js';
import { decodeStateEntry, prepareStateWrite, stateKey, stateLostError } from '../state-support.js';
import { storeMessages as messages } from '../store.messages.js';
import { StoreCallKit, WatchFanOut } from '../store-support.js';
import { memoryMessages } from './memory.messages.js';

interface Slot {
  holder?: string;
  leaseId?: string;
  expiresAt: number;
  term: number;
  /** Leader state by key, as the JSON a real store would keep (so a read never shares objects). */
  state: Map<string, string>;
  /** The holder's meta, as JSON. */
  meta?: string;
  /** A directed handover's reservation of the free lease. */
  reservedFor?: string;
  reservedUntil?: number;
  /** The pending handover request, as JSON. */
  handover?: string;
  /** Shared records by key, apart from the lease and its state: JSON and version. */
  records: Map<string, { json: string; version: string }>;
}

/**
 * Options of {@link InMemoryLeaseStore}.
 * @inline
 */
export interface InMemoryLeaseStoreOptions {
  /** Times expiry and reservations; give the electors' clock (a `FakeClock` in tests). Default: the system clock. */
  clock?: Clock;
  /**
   * Accept this store when `NODE_ENV=production`. Leases in one process's memory elect a leader
   * among that process's electors only: every replica of a deployment would lead. So an `Elector`
   * (and `LeaderElectionModule`) refuses this store in production unless it was built with
   * `allowInProduction: true`, for an app that really runs as a single process. Default false.
   */
  allowInProduction?: boolean;
}

/**
 * Leases in this process's memory: for tests and single-instance development. Several electors
 * (several Nest apps in one process) can share one instance; expiry uses the injected clock.
 * Refused under `NODE_ENV=production` unless built with `allowInProduction: true`.
 */
export class InMemoryLeaseStore implements LeaseStore {
  readonly name = 'InMemoryLeaseStore';
  /** Leases live in this process only: what the elector's production guard looks for. */
  readonly inMemory = true;
  /** Built with `allowInProduction: true`: the production guard lets it through. */
  readonly allowInProduction: boolean;
  readonly limits: LeaseStoreLimits = {
    minLeaseDurationMs: 1,
    maxLeaseDurationMs: Number.MAX_SAFE_INTEGER,
    reason: 'in-memory leases accept any positive duration',
  };
  readonly conditionalSpreadRequests = true;
  private readonly slots = new Map<string, Slot>();
  private readonly watchers = new WatchFanOut();
  private readonly calls = new StoreCallKit({ name: this.name, classify: toLeaseStoreError });
  private readonly clock: Clock;
  /** One counter for every record of the store, so a version is never handed out twice. */
  private recordVersions = 0;

  constructor(options: InMemoryLeaseStoreOptions = {}) {
    const { clock = systemClock, allowInProduction = false } = options;
    if (typeof allowInProduction !== 'boolean') {
      throw new TypeError(memoryMessages.optionNotBoolean('allowInProduction', allowInProduction));
    }
    this.clock = clock;
    this.allowInProduction = allowInProduction;
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    encodeLeaseMeta(this.name, request.meta);
    return this.calls.acquire(request, {
      attempt: async (leaseId) => this.take(request, leaseId),
      releaseAttempt: async (leaseId) => this.free(request.election, leaseId),
    });
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const meta = encodeLeaseMeta(this.name, options.meta);
    return this.calls.run(options.signal, async () => {
      this.extend(lease, options.leaseDurationMs, meta);
    });
  }

  /** The renewal, its state writes and its reads in one synchronous step: nothing can land in between. */
  async renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    const meta = encodeLeaseMeta(this.name, options.meta);
    const asked = prepareRenewal(this, { state: true, handover: true, records: true }, lease, options);
    return this.calls.run(options.signal, async () => {
      const slot = this.extend(lease, options.leaseDurationMs, meta);
      for (const write of asked.writes) slot.state.set(write.key, write.entry);
      return renewalReply(
        asked,
        () => decodeHandoverRequest(slot.handover),
        (key) => {
          const stored = slot.records.get(key);
          return stored && { value: JSON.parse(stored.json), version: stored.version };
        },
      );
    });
  }

  async release(lease: Lease, options: ReleaseOptions): Promise<void> {
    const reservation = releaseReservation(options, this.limits);
    return this.calls.run(options.signal, async () => this.free(lease.election, lease.leaseId, reservation));
  }

  read(election: string, options: CallOptions): Promise<LeaseInfo> {
    return this.calls.run(options.signal, async () => {
      const slot = this.slot(election);
      if (this.isHeld(slot)) return { held: true, holder: slot.holder, term: slot.term, ...this.metaOf(slot) };
      const reservedFor = this.reservation(slot)?.to;
      return reservedFor === undefined
        ? { held: false, term: slot.term }
        : { held: false, term: slot.term, reservedFor };
    });
  }

  /** Check and write in one synchronous step: nothing can land in between. */
  async requestHandover(request: HandoverRequest, options: CallOptions): Promise<boolean> {
    const json = encodeHandoverRequest(this.name, request);
    return this.calls.run(options.signal, async () => {
      const slot = this.slot(request.election);
      if (spreadRequestYields(decodeHandoverRequest(slot.handover), request)) return false;
      slot.handover = json;
      return true;
    });
  }

  readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    return this.calls.run(options.signal, async () => decodeHandoverRequest(this.slot(election).handover));
  }

  clearHandover(election: string, id: string, options: CallOptions): Promise<void> {
    return this.calls.run(options.signal, async () => {
      const slot = this.slot(election);
      if (decodeHandoverRequest(slot.handover)?.id === id) slot.handover = undefined;
    });
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    return this.watchers.add(election, onMayBeFree);
  }

  listElections(options: CallOptions): Promise<string[]> {
    return this.calls.run(options.signal, async () =>
      [...this.slots].flatMap(([election, slot]) => (slot.term > 0 || slot.handover ? [election] : [])).sort(),
    );
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

  async readRecord(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    const checked = recordKey(key);
    return this.calls.run(options.signal, async () => {
      const stored = this.slot(election).records.get(checked);
      return stored === undefined ? undefined : { value: JSON.parse(stored.json), version: stored.version };
    });
  }

  /** Compare and set in one synchronous step: nothing can land in between. Never touches the lease. */
  async writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    const write = prepareRecordWrite(this, key, value, options);
    return this.calls.run(options.signal, async () => {
      const records = this.slot(election).records;
      if ((records.get(write.key)?.version ?? null) !== write.ifVersion) return false;
      this.recordVersions += 1;
      records.set(write.key, { json: write.json, version: String(this.recordVersions) });
      return true;
    });
  }

  /**
   * The protocol's one write: take the slot under `leaseId` if free or expired. Protected so a test
   * can put a fault between the shared acquire rule and it (a reply lost after the write applied).
   */
  protected take(request: AcquireRequest, leaseId: string): AcquireResult | Promise<AcquireResult> {
    const meta = encodeLeaseMeta(this.name, request.meta);
    const slot = this.slot(request.election);
    if (this.isHeld(slot)) {
      const expiresInMs = slot.expiresAt - this.clock.now();
      return { acquired: false, holder: slot.holder, term: slot.term, expiresInMs, ...this.metaOf(slot) };
    }
    const reserved = this.reservation(slot);
    if (reserved && reserved.to !== request.identity) {
      return { acquired: false, term: slot.term, reservedFor: reserved.to, expiresInMs: reserved.inMs };
    }
    slot.holder = request.identity;
    slot.leaseId = leaseId;
    slot.term += 1;
    slot.expiresAt = this.clock.now() + request.leaseDurationMs;
    slot.meta = meta;
    slot.reservedFor = undefined;
    slot.reservedUntil = undefined;
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

  /** The renewal's one step: our unexpired lease extended, else LeaseLostError. */
  private extend(lease: Lease, durationMs: number, meta: string | undefined): Slot {
    const slot = this.slot(lease.election);
    if (!this.isHeld(slot) || slot.leaseId !== lease.leaseId) {
      throw new LeaseLostError(messages.leaseLost(lease.election));
    }
    slot.expiresAt = this.clock.now() + durationMs;
    if (meta !== undefined) slot.meta = meta;
    return slot;
  }

  private free(election: string, leaseId: string, reservation?: { to: string; ms: number }): void {
    const slot = this.slot(election);
    if (slot.leaseId !== leaseId || !this.isHeld(slot)) return;
    slot.holder = undefined;
    slot.leaseId = undefined;
    slot.expiresAt = 0;
    slot.meta = undefined;
    slot.reservedFor = reservation?.to;
    slot.reservedUntil = reservation ? this.clock.now() + reservation.ms : undefined;
    queueMicrotask(() => this.watchers.notify(election));
  }

  private metaOf(slot: Slot): { meta?: LeaseMeta } {
    const meta = decodeLeaseMeta(slot.meta);
    return meta === undefined ? {} : { meta };
  }

  private reservation(slot: Slot): { to: string; inMs: number } | undefined {
    const inMs = (slot.reservedUntil ?? 0) - this.clock.now();
    return slot.reservedFor !== undefined && inMs > 0 ? { to: slot.reservedFor, inMs } : undefined;
  }

  private slot(election: string): Slot {
    const slot = this.slots.get(election) ?? { expiresAt: 0, term: 0, state: new Map(), records: new Map() };
    this.slots.set(election, slot);
    return slot;
  }

  private isHeld(slot: Slot): boolean {
    return slot.leaseId !== undefined && this.clock.now() < slot.expiresAt;
  }
}
