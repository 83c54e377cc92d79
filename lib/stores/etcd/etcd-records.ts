import type { IKeyValue } from 'etcd3';
import { FatalLeaseStoreError } from '../../shared/errors.js';
import type { CallOptions, LeaseStore, RecordWriteOptions, SharedRecord } from '../lease-store.js';
import { prepareRecordWrite, recordKey } from '../record-support.js';
import { storeMessages as messages } from '../store.messages.js';
import type { StoreCallKit } from '../store-support.js';
import type { EtcdClient } from './etcd-client.js';
import type { EtcdKeys } from './etcd-txns.js';

/**
 * A version this store hands out: a mod revision, a positive decimal. At most 18 digits, so etcd3
 * converts it to an int64 exactly (a longer string could wrap around to some other revision).
 */
const REVISION = /^[1-9][0-9]{0,17}$/;

/**
 * Shared records of EtcdLeaseStore: one key per record (`<prefix><election>/records/<key>`) holding
 * the value's JSON, put WITHOUT an etcd lease, so it outlives every lease of the election. The
 * version is the key's mod revision (etcd's global revision of its last write: never reused, so
 * no ABA), and a write is one transaction comparing it: `create_revision == 0` for "only if
 * absent", `mod_revision == version` otherwise.
 */
export class EtcdSharedRecords {
  constructor(
    private readonly store: Pick<LeaseStore, 'name'>,
    private readonly etcd: EtcdClient,
    private readonly keys: EtcdKeys,
    private readonly calls: Pick<StoreCallKit, 'run'>,
  ) {}

  async read(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    const checked = recordKey(key);
    const kv = await this.calls.run(options.signal, async () => {
      const etcd = this.etcd.getClient();
      return (await etcd.get(this.keys.record(election, checked)).options(this.etcd.deadline()).exec()).kvs[0];
    });
    return kv ? this.decode(election, checked, kv) : undefined;
  }

  async write(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    const { key: checked, json, ifVersion } = prepareRecordWrite(this.store, key, value, options);
    const target = this.keys.record(election, checked);
    return this.calls.run(options.signal, async () => {
      // Not a version of ours (another store's, or made up): no record has it. Never sent, since
      // etcd3 would turn an unparsable revision into 0, which an absent key matches.
      if (ifVersion !== null && !REVISION.test(ifVersion)) return false;
      const etcd = this.etcd.getClient();
      const condition =
        ifVersion === null ? etcd.if(target, 'Create', '==', 0) : etcd.if(target, 'Mod', '==', ifVersion);
      const txn = await condition.then(etcd.put(target).value(json)).options(this.etcd.deadline()).commit();
      return txn.succeeded;
    });
  }

  /** A record's key-value as readRecord answers it (the folded renewal reads them in its txn). */
  decode(election: string, key: string, kv: IKeyValue): SharedRecord {
    try {
      return { value: JSON.parse(kv.value.toString()) as unknown, version: kv.mod_revision };
    } catch {
      throw new FatalLeaseStoreError(messages.records.corrupt(this.store.name, election, key));
    }
  }
}
