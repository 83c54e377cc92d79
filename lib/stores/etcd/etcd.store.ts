import { randomBytes } from 'node:crypto';
// A static import is fine here: this file is reachable only through the `/etcd` subpath, whose
// users have installed the optional peer `etcd3`.
import { Etcd3, EtcdLeaseInvalidError, GRPCCancelledError, type IKeyValue, type IOptions, type Watcher } from 'etcd3';
import { messages } from '../../leader-election.messages.js';
import { throwIfAborted } from '../../shared/abort.js';
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
} from '../lease-store.js';
import { decodeStateEntry, prepareStateWrite, stateKey, stateLostError } from '../state-support.js';
import { type Step, StoreCalls } from '../store-support.js';
import { etcdClientOptions } from './etcd-client.js';
import { classifyEtcdError } from './etcd-errors.js';

const STORE = 'EtcdLeaseStore';
const DEFAULT_PREFIX = 'leader-election/';
const PREFIX = /^[\x21-\x7e]{0,200}$/;
/** etcd lease ids are 64-bit integers; etcd3 passes them as decimal strings. */
const LEASE_ID = /^[1-9][0-9]{0,19}$/;

export interface EtcdLeaseStoreOptions {
  /** An existing etcd3 client. The store never closes it. */
  client?: Etcd3;
  /**
   * Endpoint(s) (`http://host:2379`) or etcd3 options for a client the store opens (and closes in
   * `close()`). Defaults added unless given: dial timeout 5 s, no client-side retries.
   */
  connection?: string | string[] | IOptions;
  /**
   * Prefix of the keys: `<prefix><election>` is the lease key, `<prefix><election>/term` records
   * the last term, `<prefix><election>/state/<key>` holds leader state. Default `leader-election/`.
   */
  keyPrefix?: string;
  /** Upper bound of one gRPC call (its deadline), besides the caller's signal. Default 10000. */
  callTimeoutMs?: number;
}

/**
 * Leases as etcd leases: the election key is created only if absent (a transaction comparing its
 * create revision with 0), attached to an etcd lease with a TTL, so etcd deletes it by itself
 * when the holder stops renewing. The fencing token is the key's create revision, which strictly
 * increases across holders. Renewal is one keep-alive sent by the elector itself (the etcd3
 * client's automatic keep-alive reports a loss only after twice the TTL, far past our deadline).
 * {@link watch} watches the key, so followers contend the moment it is deleted: released, or
 * expired after a crash.
 *
 * Leader state is written by a transaction comparing the lease key's etcd lease and create revision
 * (the term) with ours: the key exists only while its lease lives, so it fails once we lost it.
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
    reason: messages.etcd.leaseDurationReason,
  };

  private readonly prefix: string;
  private readonly callTimeoutMs: number;
  private readonly userClient?: Etcd3;
  private readonly connection?: IOptions;
  private client?: Etcd3;
  private readonly watchers = new Set<Watcher>();
  /** Elections whose key the watch saw deleted since their last acquire: that acquire skips its read. */
  private readonly seenDeleted = new Set<string>();
  private readonly calls = new StoreCalls({
    name: STORE,
    classify: (error) => classifyEtcdError(error, this.prefix),
    // Chosen by us, not by etcd: an acquire whose reply was lost can then still be revoked by id.
    newLeaseId: () => String((randomBytes(8).readBigUInt64BE() >> 2n) + 1n),
  });

  constructor(options: EtcdLeaseStoreOptions) {
    if (!options?.client === !options?.connection) {
      throw new TypeError(
        messages.backend.clientOrConnection(STORE, 'an etcd3 Etcd3 client', 'endpoints or etcd3 options'),
      );
    }
    const prefix = options.keyPrefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
      throw new TypeError(messages.backend.invalidPrefix(STORE, 'keyPrefix', prefix));
    }
    this.prefix = prefix;
    this.callTimeoutMs = options.callTimeoutMs ?? 10_000;
    this.userClient = options.client;
    if (!options.client) {
      this.connection = etcdClientOptions(options.connection as string | string[] | IOptions);
    }
  }

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    const key = this.key(election);
    const attempt = async (leaseId: string, step: Step): Promise<AcquireResult> => {
      const etcd = this.getClient();
      // Polling followers mostly find the key held: one read answers that without granting a lease.
      // Just after the watch saw the key deleted it is most likely free: skip the read (one round
      // trip less on a handover); if another got there first, the transaction says so.
      if (!this.seenDeleted.delete(election)) {
        const current = (await etcd.get(key).options(this.callOptions()).exec()).kvs[0];
        if (current) return notAcquired(current);
        step();
      }
      await etcd.leaseClient.leaseGrant({ TTL: Math.ceil(leaseDurationMs / 1000), ID: leaseId }, this.callOptions());
      step();
      const txn = await etcd
        .if(key, 'Create', '==', 0)
        .then(
          etcd
            .put(key)
            .value(JSON.stringify({ holder: identity }))
            .lease(leaseId),
          // Written in the same revision as the key: it keeps the last term once the key is gone.
          etcd.put(this.termKey(election)).value(JSON.stringify({ holder: identity })),
        )
        .else(etcd.get(key))
        .options(this.callOptions())
        .commit();
      if (txn.succeeded) {
        return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(txn.header.revision) } };
      }
      // Someone created the key between our read and the transaction: our lease guards nothing.
      this.calls.track(this.revoke(leaseId));
      const winner = txn.responses[0]?.response_range?.kvs[0];
      return winner ? notAcquired(winner) : { acquired: false };
    };
    // The key lives only as long as the etcd lease: revoking the attempt's lease undoes it.
    return this.calls.acquire(request, {
      attempt,
      releaseAttempt: (leaseId, signal) => this.calls.run(signal, () => this.revoke(leaseId)),
    });
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    throwIfAborted(options.signal);
    // Not an etcd lease id at all: certainly not a lease we were granted.
    if (!LEASE_ID.test(lease.leaseId)) throw new LeaseLostError(messages.leaseLost(lease.election));
    const key = this.key(lease.election);
    const renewed = await this.calls.run(options.signal, async () => {
      const etcd = this.getClient();
      // Both in parallel: the keep-alive extends the TTL if the lease lives; the read proves the
      // key is still attached to it (a lease outliving its key guards nothing).
      const [ttl, current] = await Promise.all([
        this.keepAliveOnce(etcd, lease.leaseId, options.signal),
        etcd.get(key).options(this.callOptions()).exec(),
      ]);
      const kv = current.kvs[0];
      // etcd fixes the TTL when the lease is granted. Asked for more than that, the lease would end
      // before the caller expects: report it lost, so the next acquire grants the longer TTL.
      const longEnough = ttl * 1000 >= options.leaseDurationMs;
      return longEnough && kv?.lease === lease.leaseId && kv.create_revision === String(lease.term);
    });
    if (!renewed) {
      this.calls.track(this.revoke(lease.leaseId));
      throw new LeaseLostError(messages.leaseLost(lease.election));
    }
  }

  async release(lease: Lease, options: CallOptions): Promise<void> {
    throwIfAborted(options.signal);
    if (!LEASE_ID.test(lease.leaseId)) return;
    // One write: revoking our etcd lease deletes the key only if it is still attached to it (ours:
    // lease ids are random per acquire), and etcd tells the watchers at once. A conditional delete
    // first would put a second write, and its disk sync, before the next holder's own writes.
    await this.calls.run(options.signal, async () => {
      await this.revoke(lease.leaseId);
    });
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    return this.calls.run(options.signal, async (step) => {
      const etcd = this.getClient();
      const current = (await etcd.get(this.key(election)).options(this.callOptions()).exec()).kvs[0];
      if (current) return { held: true, holder: holderOf(current), term: Number(current.create_revision) };
      step();
      const last = (await etcd.get(this.termKey(election)).options(this.callOptions()).exec()).kvs[0];
      return { held: false, term: last ? Number(last.mod_revision) : 0 };
    });
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this, lease, value, options);
    if (!LEASE_ID.test(lease.leaseId)) throw stateLostError(lease);
    const leaseKey = this.key(lease.election);
    const txn = await this.calls.run(options.signal, async () => {
      const etcd = this.getClient();
      return etcd
        .if(leaseKey, 'Lease', '==', lease.leaseId)
        .and(leaseKey, 'Create', '==', lease.term)
        .then(etcd.put(this.stateKey(lease.election, key)).value(entry))
        .options(this.callOptions())
        .commit();
    });
    if (!txn.succeeded) throw stateLostError(lease);
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const kv = await this.calls.run(options.signal, async () => {
      const etcd = this.getClient();
      return (await etcd.get(this.stateKey(election, key)).options(this.callOptions()).exec()).kvs[0];
    });
    return kv ? decodeStateEntry(STORE, election, key, kv.value.toString()) : undefined;
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    let watcher: Watcher | undefined;
    let closed = false;
    const opened = Promise.resolve()
      .then(() => this.getClient())
      .then((etcd) => {
        if (closed) return;
        watcher = etcd.watch().key(this.key(election)).only('delete').watcher();
        this.watchers.add(watcher);
        let connectedBefore = false;
        // After a reconnect etcd3 resumes from the last revision seen, but a spurious wake is cheap.
        watcher.on('connected', () => {
          if (connectedBefore) onMayBeFree();
          connectedBefore = true;
        });
        watcher.on('delete', () => {
          this.seenDeleted.add(election);
          onMayBeFree();
        });
        // Best effort: etcd3 reconnects the watch stream itself; polling covers the gap.
        watcher.on('error', () => undefined);
      })
      .catch(() => undefined);
    return {
      close: async () => {
        closed = true;
        await opened;
        if (!watcher) return;
        this.watchers.delete(watcher);
        await watcher.cancel().catch(() => undefined);
      },
    };
  }

  close(): Promise<void> {
    return this.calls.close({
      stopWatching: async () => {
        await Promise.allSettled([...this.watchers].map((watcher) => watcher.cancel()));
        this.watchers.clear();
      },
      // Only our own client: a client the user passed in stays theirs.
      disconnect: () => this.client !== this.userClient && this.client?.close(),
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  private key(election: string): string {
    return `${this.prefix}${election}`;
  }

  private termKey(election: string): string {
    return `${this.prefix}${election}/term`;
  }

  private stateKey(election: string, key: string): string {
    return `${this.prefix}${election}/state/${key}`;
  }

  /** A deadline for one gRPC call, so nothing we abandon lingers on the channel for long. */
  private callOptions(): { deadline: Date } {
    return { deadline: new Date(Date.now() + this.callTimeoutMs) };
  }

  /** One keep-alive on a stream of its own; resolves the TTL etcd answered (0: lease gone). */
  private async keepAliveOnce(etcd: Etcd3, leaseId: string, signal: AbortSignal): Promise<number> {
    const stream = await etcd.leaseClient.leaseKeepAlive(this.callOptions());
    const cancel = () => stream.cancel();
    signal.addEventListener('abort', cancel, { once: true });
    try {
      return await new Promise<number>((resolve, reject) => {
        stream.on('data', (response: { TTL: string }) => resolve(Number(response.TTL)));
        stream.on('error', reject);
        stream.on('end', () => reject(new GRPCCancelledError('keep-alive stream ended')));
        stream.write({ ID: leaseId });
      });
    } finally {
      signal.removeEventListener('abort', cancel);
      stream.end();
    }
  }

  private async revoke(leaseId: string): Promise<void> {
    const etcd = this.getClient();
    try {
      await etcd.leaseClient.leaseRevoke({ ID: leaseId }, this.callOptions());
    } catch (error) {
      // Already expired or revoked: that is what we wanted.
      if (!(error instanceof EtcdLeaseInvalidError)) throw error;
    }
  }

  private getClient(): Etcd3 {
    this.calls.assertOpen();
    this.client ??= this.userClient ?? new Etcd3(this.connection);
    return this.client;
  }
}

// ---- helpers ------------------------------------------------------------------------------------

function notAcquired(kv: IKeyValue): AcquireResult {
  return { acquired: false, holder: holderOf(kv), term: Number(kv.create_revision) };
}

function holderOf(kv: IKeyValue): string | undefined {
  try {
    const holder = (JSON.parse(kv.value.toString()) as { holder?: unknown }).holder;
    return typeof holder === 'string' ? holder : undefined;
  } catch {
    return undefined;
  }
}
