import { decodeHandoverRequest, encodeHandoverRequest } from '../handover-support.js';
import type { CallOptions, HandoverRequest } from '../lease-store.js';
import { isReplicaRequest, spreadRequestYields } from '../lease-store.spread-rule.js';
import type { Step, StoreCallKit } from '../store-support.js';
import type { EtcdClient } from './etcd-client.js';
import type { EtcdKeys } from './etcd-txns.js';

/**
 * The handover request slot of EtcdLeaseStore: one plain key per election (`<prefix><election>/handover`)
 * holding the pending request's JSON, written by anyone, leader or not, and cleared by a transaction
 * comparing the revision read, so a newer request is kept.
 */
export class EtcdHandoverRequests {
  constructor(
    private readonly store: string,
    private readonly etcd: EtcdClient,
    private readonly keys: EtcdKeys,
    private readonly calls: Pick<StoreCallKit, 'run'>,
  ) {}

  /** Async, so a malformed request rejects like any other failure (never throws at the call). */
  async request(request: HandoverRequest, options: CallOptions): Promise<boolean> {
    const json = encodeHandoverRequest(this.store, request);
    const key = this.keys.handover(request.election);
    return this.calls.run(options.signal, async (step) => {
      if (isReplicaRequest(request.reason)) return this.putSpreadRequest(key, request, json, step);
      await this.etcd.getClient().put(key).value(json).options(this.etcd.deadline()).exec();
      return true;
    });
  }

  async read(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    const kv = await this.calls.run(options.signal, async () => {
      const etcd = this.etcd.getClient();
      return (await etcd.get(this.keys.handover(election)).options(this.etcd.deadline()).exec()).kvs[0];
    });
    return kv ? decodeHandoverRequest(kv.value.toString()) : undefined;
  }

  async clear(election: string, id: string, options: CallOptions): Promise<void> {
    const key = this.keys.handover(election);
    await this.calls.run(options.signal, async (step) => {
      const etcd = this.etcd.getClient();
      const kv = (await etcd.get(key).options(this.etcd.deadline()).exec()).kvs[0];
      if (!kv || decodeHandoverRequest(kv.value.toString())?.id !== id) return;
      step();
      // Only the version we read: a newer request written meanwhile is kept.
      await etcd
        .if(key, 'Mod', '==', kv.mod_revision)
        .then(etcd.delete().key(key))
        .options(this.etcd.deadline())
        .commit();
    });
  }

  /**
   * A replica's own request (spread, priority) under the slot rule ({@link spreadRequestYields}):
   * read the pending request, then put only if the key is still the version read (its mod revision;
   * 0 while absent). A write landing in between fails the compare, and the rule is judged again on
   * what it wrote.
   * → true written, false refused.
   */
  private async putSpreadRequest(key: string, request: HandoverRequest, json: string, step: Step): Promise<boolean> {
    const etcd = this.etcd.getClient();
    for (;;) {
      const kv = (await etcd.get(key).options(this.etcd.deadline()).exec()).kvs[0];
      if (spreadRequestYields(kv ? decodeHandoverRequest(kv.value.toString()) : undefined, request)) return false;
      step();
      const put = etcd.put(key).value(json);
      const txn = await etcd
        .if(key, 'Mod', '==', kv ? kv.mod_revision : 0)
        .then(put)
        .options(this.etcd.deadline())
        .commit();
      if (txn.succeeded) return true;
      step();
    }
  }
}
