// Plain clients of the machine's Redis and of the test run's etcd, for the store specs that look
// behind a store (key layout, values written by hand) and remove their run's keys when done.
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import { etcdEndpoint, REDIS_URL } from '../setup/servers.js';

export async function withRedis<T>(work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(REDIS_URL);
  try {
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

export async function withEtcd<T>(work: (etcd: Etcd3) => Promise<T>): Promise<T> {
  const etcd = new Etcd3({ hosts: etcdEndpoint() });
  try {
    return await work(etcd);
  } finally {
    etcd.close();
  }
}

/** Deletes every Redis key starting with `prefix` (a test run's own). */
export function deleteRedisKeys(prefix: string): Promise<void> {
  return withRedis(async (redis) => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  });
}

/** Deletes every etcd key starting with `prefix` (a test run's own). */
export async function deleteEtcdKeys(prefix: string): Promise<void> {
  await withEtcd((etcd) => etcd.delete().prefix(prefix).exec());
}
