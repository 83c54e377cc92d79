// nestjs-leader-election/redis: the Redis lease store. Its driver `ioredis` is an optional peer
// dependency, loaded only when a store first talks to the server.
export { RedisLeaseStore, type RedisLeaseStoreOptions } from './stores/redis.store.js';
