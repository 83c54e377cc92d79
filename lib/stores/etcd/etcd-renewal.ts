import type { ComparatorBuilder, Etcd3, IRequestOp, IResponseOp } from 'etcd3';
import { throwIfAborted } from '../../shared/abort.js';
import { LeaseLostError } from '../../shared/errors.js';
import { decodeHandoverRequest, encodeLeaseMeta } from '../handover-support.js';
import type { Lease, LeaseStore, RenewWithOptions, RenewWithReply } from '../lease-store.js';
import { type PreparedRenewal, prepareRenewal, renewalReply } from '../renew-with-support.js';
import { storeMessages } from '../store.messages.js';
import type { StoreCallKit } from '../store-support.js';
import type { EtcdClient } from './etcd-client.js';
import { keepAliveOnce } from './etcd-leases.js';
import type { EtcdSharedRecords } from './etcd-records.js';
import { ETCD_LEASE_ID, type EtcdKeys, ifOurs, leaseValue } from './etcd-txns.js';

/**
 * The folded renewal of EtcdLeaseStore (`renewWith`): the keep-alive in parallel with ONE
 * transaction, conditional on the lease key still being attached to our etcd lease with our create
 * revision (the term), whose success branch puts the leader state (each key as writeState puts it),
 * puts the meta when given, and reads the handover request and the asked records (as readHandover
 * and readRecord read them). Without a put it is a read-only transaction, which etcd answers with
 * a linearizable read and no raft write.
 *
 * Meta: put whenever given, not compared with what is stored first (renew reads the key for that,
 * a round trip this call does not make). The elector sends meta only when it changed from what
 * the store took (OwnLeaseMeta.renewal), so that is a write only on a change; a put of an equal
 * value changes nothing a reader sees (the term is the create revision, and the followers' watches
 * ignore puts). The value is what the acquire writes, `{holder, meta}`.
 */
export class EtcdFoldedRenewal {
  constructor(
    private readonly store: Pick<LeaseStore, 'name' | 'limits'>,
    private readonly etcd: EtcdClient,
    private readonly keys: EtcdKeys,
    private readonly calls: Pick<StoreCallKit, 'run' | 'track'>,
    private readonly records: EtcdSharedRecords,
  ) {}

  async renew(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    const meta = encodeLeaseMeta(this.store.name, options.meta);
    const asked = prepareRenewal(this.store, { state: true, handover: true, records: true }, lease, options);
    throwIfAborted(options.signal);
    // Not an etcd lease id at all: certainly not a lease we were granted.
    if (!ETCD_LEASE_ID.test(lease.leaseId)) throw new LeaseLostError(storeMessages.leaseLost(lease.election));
    const reads = await this.calls.run(options.signal, async () => {
      const etcd = this.etcd.getClient();
      const [ttl, txn] = await Promise.all([
        keepAliveOnce(etcd, lease.leaseId, options.signal, this.etcd.deadline()),
        renewalTxn(etcd, this.keys, lease, asked, meta).options(this.etcd.deadline()).commit(),
      ]);
      // As renew: a TTL shorter than asked (fixed at grant) ends the lease before the caller expects.
      const longEnough = ttl * 1000 >= options.leaseDurationMs;
      // The reads follow the puts in the success branch's responses.
      return longEnough && txn.succeeded ? txn.responses.slice(putCount(asked, meta)) : undefined;
    });
    if (!reads) {
      this.calls.track(this.etcd.revoke(lease.leaseId));
      throw new LeaseLostError(storeMessages.leaseLost(lease.election));
    }
    const firstRecord = asked.readHandover ? 1 : 0;
    const records = new Map(asked.recordKeys.map((key, i) => [key, firstKv(reads[firstRecord + i])]));
    return renewalReply(
      asked,
      () => {
        const kv = firstKv(reads[0]);
        return kv ? decodeHandoverRequest(kv.value.toString()) : undefined;
      },
      (key) => {
        const kv = records.get(key);
        return kv ? this.records.decode(lease.election, key, kv) : undefined;
      },
    );
  }
}

/**
 * Our lease key still ours → [state puts…, meta put?, handover get?, record gets…], in that order.
 * The state puts carry no etcd lease, as writeState's: the state outlives the term.
 */
function renewalTxn(
  etcd: Etcd3,
  keys: EtcdKeys,
  lease: Lease,
  asked: PreparedRenewal,
  meta: string | undefined,
): ComparatorBuilder {
  const { election } = lease;
  const get = (key: string): IRequestOp => ({ request_range: { key: Buffer.from(key) } });
  const ops = [
    ...asked.writes.map((write) => etcd.put(keys.state(election, write.key)).value(write.entry)),
    ...(meta === undefined
      ? []
      : [etcd.put(keys.lease(election)).value(leaseValue(lease.holder, meta)).lease(lease.leaseId)]),
    ...(asked.readHandover ? [get(keys.handover(election))] : []),
    ...asked.recordKeys.map((key) => get(keys.record(election, key))),
  ];
  return ifOurs(etcd, keys, lease).then(...ops);
}

function putCount(asked: PreparedRenewal, meta: string | undefined): number {
  return asked.writes.length + (meta === undefined ? 0 : 1);
}

function firstKv(response: IResponseOp | undefined) {
  return response?.response_range?.kvs[0];
}
