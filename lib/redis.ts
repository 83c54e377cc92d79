/**
 * The Redis lease store (needs the optional peer `ioredis`).
 * @module @leaderlease/nestjs/redis
 */
// @leaderlease/nestjs/redis: the Redis lease store. Its driver `ioredis` is an optional peer
// dependency: only importing this subpath loads it, the root entry never does.
export { RedisLeaseStore, type RedisLeaseStoreOptions, type RedisReplicaAcks } from './stores/redis/redis.store.js';
