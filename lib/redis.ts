// nestjs-leader-election/redis: the Redis lease store. Its driver `ioredis` (an optional peer dependency) is
// loaded when this entry is imported; the main entry never imports it, so apps on other stores need no driver.
export { RedisLeaseStore, type RedisLeaseStoreOptions } from './stores/redis.store.js';
