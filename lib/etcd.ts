// nestjs-leader-election/etcd: the etcd v3 lease store. Its driver `etcd3` (an optional peer dependency) is
// loaded when this entry is imported; the main entry never imports it, so apps on other stores need no driver.
export { EtcdLeaseStore, type EtcdLeaseStoreOptions } from './stores/etcd.store.js';
