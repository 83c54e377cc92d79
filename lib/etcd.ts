// nestjs-leader-election/etcd: the etcd v3 lease store. Its driver `etcd3` is an optional peer
// dependency, loaded only when a store first talks to the server.
export { EtcdLeaseStore, type EtcdLeaseStoreOptions } from './stores/etcd.store.js';
