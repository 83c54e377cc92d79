import type { LeaderStateEntry, Lease, LeaseStore, StateCallOptions } from '../lease-store.js';
import { decodeStateEntry, prepareStateWrite, stateKey, stateLostError } from '../state-support.js';
import type { StoreCallKit } from '../store-support.js';
import type { EtcdClient } from './etcd-client.js';
import { ETCD_LEASE_ID, type EtcdKeys } from './etcd-txns.js';

/**
 * Leader state of EtcdLeaseStore: one key per state key (`<prefix><election>/state/<key>`), written
 * by a transaction comparing the lease key's etcd lease and create revision (the term) with ours:
 * the lease key exists only while its etcd lease lives, so the write fails once we lost it.
 */
export class EtcdLeaderState {
  constructor(
    private readonly store: Pick<LeaseStore, 'name' | 'limits'>,
    private readonly etcd: EtcdClient,
    private readonly keys: EtcdKeys,
    private readonly calls: Pick<StoreCallKit, 'run'>,
  ) {}

  async write(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this.store, lease, value, options);
    if (!ETCD_LEASE_ID.test(lease.leaseId)) throw stateLostError(lease);
    const leaseKey = this.keys.lease(lease.election);
    const txn = await this.calls.run(options.signal, async () => {
      const etcd = this.etcd.getClient();
      return etcd
        .if(leaseKey, 'Lease', '==', lease.leaseId)
        .and(leaseKey, 'Create', '==', lease.term)
        .then(etcd.put(this.keys.state(lease.election, key)).value(entry))
        .options(this.etcd.deadline())
        .commit();
    });
    if (!txn.succeeded) throw stateLostError(lease);
  }

  async read(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const kv = await this.calls.run(options.signal, async () => {
      const etcd = this.etcd.getClient();
      return (await etcd.get(this.keys.state(election, key)).options(this.etcd.deadline()).exec()).kvs[0];
    });
    return kv ? decodeStateEntry(this.store.name, election, key, kv.value.toString()) : undefined;
  }
}
