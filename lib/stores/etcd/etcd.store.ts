import { throwIfAborted } from '../../shared/abort.js';
import { LeaseLostError } from '../../shared/errors.js';
import { encodeLeaseMeta, releaseReservation } from '../handover-support.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  HandoverRequest,
  LeaderStateEntry,
  Lease,
  LeaseInfo,
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
import { storeMessages } from '../store.messages.js';
import { checkKeyPrefix, type Step, StoreCallKit } from '../store-support.js';
import { etcdMessages } from './etcd.messages.js';
import { EtcdClient, type EtcdLeaseStoreOptions } from './etcd-client.js';
import { classifyEtcdError } from './etcd-errors.js';
import { EtcdHandoverRequests } from './etcd-handover.js';
import { keepAliveOnce } from './etcd-leases.js';
import { EtcdSharedRecords } from './etcd-records.js';
import { EtcdFoldedRenewal } from './etcd-renewal.js';
import { EtcdLeaderState } from './etcd-state.js';
import {
  bindingReservation,
  ETCD_LEASE_ID,
  EtcdKeys,
  heldInfo,
  lastTerm,
  newEtcdLeaseId,
  putMetaTxn,
  readSnapshot,
  refusal,
  releaseToTxn,
  type Snapshot,
  snapshotOf,
  storedMetaJson,
  takeTxn,
} from './etcd-txns.js';
import { warmUpOnce } from './etcd-warmup.js';
import { EtcdDeleteWatches } from './etcd-watch.js';

export type { EtcdLeaseStoreOptions } from './etcd-client.js';

const STORE = 'EtcdLeaseStore';
const DEFAULT_PREFIX = 'leader-election/';

/**
 * Leases as etcd leases: the election key is created only if absent (a transaction comparing its
 * create revision with 0), attached to an etcd lease with a TTL, so etcd deletes it by itself
 * when the holder stops renewing. The fencing token is the key's create revision, which strictly
 * increases across holders. Renewal is one keep-alive sent by the elector itself (the etcd3
 * client's automatic keep-alive reports a loss only after twice the TTL, far past our deadline).
 * {@link watch} watches the key, so followers contend the moment it is deleted: released, or
 * expired after a crash.
 *
 * Leader state is written by a transaction conditional on our lease (etcd-state.ts); shared records, by anyone, by
 * a transaction comparing the record's own revision (etcd-records.ts). Renewals fold ({@link renewWith}): keep-alive
 * in parallel with ONE transaction on our lease that puts state and meta and reads the handover request and records.
 *
 * Handover: the holder's meta lives in the lease value (written by the acquire transaction, and by a
 * transaction conditional on our lease when a renew's meta changed). A release to a named identity
 * is one transaction that deletes our key and puts a reservation key attached to a fresh etcd lease
 * whose TTL is `reserveMs` rounded UP to whole seconds (and at least etcd's minimum TTL, 2 s by
 * default); acquire refuses anyone else while that key lives, and its own transaction deletes it.
 * A handover request is one plain key (etcd-handover.ts).
 *
 * etcd counts TTLs in whole seconds: lease durations are whole seconds from 2 s. The TTL is fixed
 * when the lease is granted; a renewal asking for a longer duration reports the lease lost.
 */
export class EtcdLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = {
    minLeaseDurationMs: 2_000,
    maxLeaseDurationMs: 24 * 3_600_000,
    leaseDurationStepMs: 1_000,
    reason: etcdMessages.leaseDurationReason,
  };

  private readonly keys: EtcdKeys;
  private readonly etcd: EtcdClient;
  private readonly watches: EtcdDeleteWatches;
  private readonly requests: EtcdHandoverRequests;
  private readonly state: EtcdLeaderState;
  private readonly records: EtcdSharedRecords;
  private readonly folded: EtcdFoldedRenewal;
  /** Elections whose key the watch saw deleted since their last acquire: that acquire skips its read. */
  private readonly seenDeleted = new Set<string>();
  private readonly calls = new StoreCallKit({
    name: STORE,
    classify: (error) => classifyEtcdError(error, this.keys.prefix),
    newLeaseId: newEtcdLeaseId,
  });

  constructor(options: EtcdLeaseStoreOptions) {
    if (!options?.client === !options?.connection) {
      throw new TypeError(
        storeMessages.backend.clientOrConnection(STORE, 'an etcd3 Etcd3 client', 'endpoints or etcd3 options'),
      );
    }
    const prefix = checkKeyPrefix(STORE, options.keyPrefix ?? DEFAULT_PREFIX);
    this.keys = new EtcdKeys(prefix);
    this.etcd = new EtcdClient(this.calls, options);
    // The acquire's and the release's messages encoded once, locally, when a watch has connected,
    // so a handover does not pay their first-use cost.
    const warmUp = warmUpOnce(() => this.etcd.getClient(), this.calls);
    this.watches = new EtcdDeleteWatches(() => this.etcd.getClient(), warmUp, options.callTimeoutMs ?? 10_000);
    this.requests = new EtcdHandoverRequests(STORE, this.etcd, this.keys, this.calls);
    this.state = new EtcdLeaderState(this, this.etcd, this.keys, this.calls);
    this.records = new EtcdSharedRecords(this, this.etcd, this.keys, this.calls);
    this.folded = new EtcdFoldedRenewal(this, this.etcd, this.keys, this.calls, this.records);
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    const meta = encodeLeaseMeta(STORE, request.meta);
    const attempt = async (leaseId: string, step: Step): Promise<AcquireResult> => {
      const etcd = this.etcd.getClient();
      // Polling followers mostly find the key held: one read answers that without granting a lease.
      // Just after the watch saw the key deleted it is most likely free: skip the read (one round
      // trip less on a handover); if another got there first, the transaction says so.
      let seen: Snapshot | undefined;
      if (!this.seenDeleted.delete(election)) {
        seen = await readSnapshot(etcd, this.keys, election, this.etcd.deadline());
        const refused = await refusal(etcd, seen, identity, this.etcd.deadline());
        if (refused) return refused;
        step();
      }
      await etcd.leaseClient.leaseGrant({ TTL: Math.ceil(leaseDurationMs / 1000), ID: leaseId }, this.etcd.deadline());
      step();
      // A second round only when the first found a reservation the skipped read did not see, that
      // turned out ours or void: the transaction then expects exactly that reservation key.
      for (let round = 1; ; round++) {
        const reservedMod = seen?.reserved?.mod_revision ?? '0';
        const txn = await takeTxn(etcd, this.keys, election, { identity, leaseId, meta, reservedMod })
          .options(this.etcd.deadline())
          .commit();
        if (txn.succeeded) {
          // The ended reservation's etcd lease guards nothing now.
          const reservation = seen?.reserved?.lease;
          if (reservation && reservation !== '0') this.calls.track(this.etcd.revoke(reservation));
          return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(txn.header.revision) } };
        }
        seen = snapshotOf(txn.responses);
        const refused = await refusal(etcd, seen, identity, this.etcd.deadline());
        if (refused || round === 2) {
          // Someone took the key, or reserved it, since our read: our lease guards nothing.
          this.calls.track(this.etcd.revoke(leaseId));
          return refused ?? { acquired: false, term: lastTerm(seen) };
        }
        step();
      }
    };
    // The key lives only as long as the etcd lease: revoking the attempt's lease undoes it.
    return this.calls.acquire(request, {
      attempt,
      releaseAttempt: (leaseId, signal) => this.calls.run(signal, () => this.etcd.revoke(leaseId)),
    });
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const meta = encodeLeaseMeta(STORE, options.meta);
    throwIfAborted(options.signal);
    // Not an etcd lease id at all: certainly not a lease we were granted.
    if (!ETCD_LEASE_ID.test(lease.leaseId)) throw new LeaseLostError(storeMessages.leaseLost(lease.election));
    const key = this.keys.lease(lease.election);
    const renewed = await this.calls.run(options.signal, async (step) => {
      const etcd = this.etcd.getClient();
      // Both in parallel: the keep-alive extends the TTL if the lease lives; the read proves the
      // key is still attached to it (a lease outliving its key guards nothing).
      const [ttl, current] = await Promise.all([
        keepAliveOnce(etcd, lease.leaseId, options.signal, this.etcd.deadline()),
        etcd.get(key).options(this.etcd.deadline()).exec(),
      ]);
      const kv = current.kvs[0];
      // etcd fixes the TTL when the lease is granted. Asked for more than that, the lease would end
      // before the caller expects: report it lost, so the next acquire grants the longer TTL.
      const longEnough = ttl * 1000 >= options.leaseDurationMs;
      const ours = longEnough && kv?.lease === lease.leaseId && kv.create_revision === String(lease.term);
      // A write (a raft round and a disk sync) only when the meta changed, conditional on our lease.
      if (!ours || !kv || meta === undefined || storedMetaJson(kv) === meta) return ours;
      step();
      return (await putMetaTxn(etcd, this.keys, lease, kv, meta).options(this.etcd.deadline()).commit()).succeeded;
    });
    if (!renewed) {
      this.calls.track(this.etcd.revoke(lease.leaseId));
      throw new LeaseLostError(storeMessages.leaseLost(lease.election));
    }
  }

  renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    return this.folded.renew(lease, options);
  }

  async release(lease: Lease, options: ReleaseOptions): Promise<void> {
    const reservation = releaseReservation(options, this.limits);
    throwIfAborted(options.signal);
    if (!ETCD_LEASE_ID.test(lease.leaseId)) return;
    // One write: revoking our etcd lease deletes the key only if it is still attached to it (ours:
    // lease ids are random per acquire), and etcd tells the watchers at once. A conditional delete
    // first would put a second write, and its disk sync, before the next holder's own writes —
    // except for a directed handover, whose reservation must be written in the same transaction.
    await this.calls.run(options.signal, async (step) => {
      if (reservation) await this.releaseTo(lease, reservation, step);
      await this.etcd.revoke(lease.leaseId);
    });
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const seen = await this.calls.run(options.signal, () =>
      readSnapshot(this.etcd.getClient(), this.keys, election, this.etcd.deadline()),
    );
    if (seen.lease) return heldInfo(seen.lease);
    const term = lastTerm(seen);
    const reservedFor = bindingReservation(seen)?.to;
    return reservedFor === undefined ? { held: false, term } : { held: false, term, reservedFor };
  }

  readonly conditionalSpreadRequests = true;

  requestHandover(request: HandoverRequest, options: CallOptions): Promise<boolean> {
    return this.requests.request(request, options);
  }

  readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    return this.requests.read(election, options);
  }

  clearHandover(election: string, id: string, options: CallOptions): Promise<void> {
    return this.requests.clear(election, id, options);
  }

  /** One range over the prefix, keys only (state values are never sent). */
  async listElections(options: CallOptions): Promise<string[]> {
    const keys = await this.calls.run(options.signal, async () =>
      this.etcd.getClient().getAll().prefix(this.keys.prefix).options(this.etcd.deadline()).keys(),
    );
    const names = new Set(keys.flatMap((key) => this.keys.electionOf(key) ?? []));
    return [...names].sort();
  }

  writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    return this.state.write(lease, value, options);
  }

  readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    return this.state.read(election, options);
  }

  readRecord(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    return this.records.read(election, key, options);
  }

  writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    return this.records.write(election, key, value, options);
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    return this.watches.add(this.keys.lease(election), () => this.seenDeleted.add(election), onMayBeFree);
  }

  close(): Promise<void> {
    return this.calls.close({
      stopWatching: () => this.watches.close(),
      // Only our own client: a client the user passed in stays theirs.
      disconnect: () => this.etcd.close(),
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  /** Frees our key and reserves the election for `to`, in one transaction conditional on our lease. */
  private async releaseTo(lease: Lease, reservation: { to: string; ms: number }, step: Step): Promise<void> {
    const etcd = this.etcd.getClient();
    const reservationId = newEtcdLeaseId();
    // Whole seconds, rounded up: a reservation never ends before reserveMs.
    await etcd.leaseClient.leaseGrant(
      { TTL: Math.ceil(reservation.ms / 1000), ID: reservationId },
      this.etcd.deadline(),
    );
    let reserved = false;
    try {
      step();
      const txn = releaseToTxn(etcd, this.keys, lease, reservation.to, reservationId);
      reserved = (await txn.options(this.etcd.deadline()).commit()).succeeded;
    } finally {
      // Not ours any more (or the outcome is unknown): nothing, or nothing needed, hangs on it.
      if (!reserved) this.calls.track(this.etcd.revoke(reservationId));
    }
  }
}
