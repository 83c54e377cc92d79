/**
 * The etcd v3 lease store (needs the optional peer `etcd3`).
 * @module @leaderlease/nestjs/etcd
 */
// @leaderlease/nestjs/etcd: the etcd v3 lease store. Its driver `etcd3` is an optional peer
// dependency: only importing this subpath loads it, the root entry never does.
export { EtcdLeaseStore, type EtcdLeaseStoreOptions } from './stores/etcd/etcd.store.js';
