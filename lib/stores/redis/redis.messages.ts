/**
 * The texts of RedisLeaseStore. None may include a connection string, key or password: they are built
 * from option names and error codes only, never from the driver's own message (it may quote the connection).
 */
export const redisMessages = {
  authFailed: (code: string) =>
    `RedisLeaseStore: the server refused the login (${code}): check the username and password of the connection (the ACL user and its password, or requirepass)`,
  permissionDenied: (prefix: string) =>
    `RedisLeaseStore: the ACL user may not run the store's commands or touch its keys (NOPERM): allow keys and channels ${JSON.stringify(`${prefix}*`)} and the commands EVAL, EVALSHA, GET, MGET, SET, INCR, PEXPIRE, PTTL, DEL, PUBLISH, SUBSCRIBE, HSET, HGET, SCAN (and WAIT with replicaAcks), e.g. ACL SETUSER <user> ~${prefix}* &${prefix}* +eval +evalsha +get +mget +set +incr +pexpire +pttl +del +publish +subscribe +hset +hget +scan +ping`,
  replicaReadOnly:
    'RedisLeaseStore: the server is a read-only replica (READONLY): connect to the primary (or through Sentinel)',
  replicaAcksInvalid: (option: string, max: number, value: unknown) =>
    `RedisLeaseStore: ${option} must be an integer from 1 to ${max} (got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value)})`,
  replicasUnknown:
    'RedisLeaseStore: the connection was re-established between a write and its WAIT, so whether replicas have the write is unknown (replicaAcks); it counts as failed; will retry',
  replicasBehind: (acked: number, required: number, timeoutMs: number) =>
    `RedisLeaseStore: the write reached ${acked} of the ${required} replicas replicaAcks requires within ${timeoutMs} ms (WAIT); it counts as failed, since a failover could lose it; will retry`,
} as const;
