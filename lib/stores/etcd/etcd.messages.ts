/**
 * The texts of EtcdLeaseStore. None may include a connection string, key or password: they are built
 * from option names and error codes only, never from the driver's own message (it may quote the connection).
 */
export const etcdMessages = {
  leaseDurationReason:
    'etcd lease TTLs are whole seconds, and etcd raises a TTL below its minimum (1.5 × the election timeout: 2 s with default settings) to that minimum, so a 1 s lease would silently last 2 s',
  authFailed: (what: string) =>
    `EtcdLeaseStore: etcd refused the credentials (${what}): check auth.username and auth.password of the connection, and that authentication is enabled on the cluster`,
  permissionDenied: (prefix: string) =>
    `EtcdLeaseStore: permission denied (PERMISSION_DENIED): give the user a role with readwrite permission on the key prefix ${JSON.stringify(prefix)}, e.g. etcdctl role grant-permission <role> --prefix=true readwrite ${JSON.stringify(prefix)}`,
} as const;
