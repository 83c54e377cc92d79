import { type Etcd3, EtcdLeaseInvalidError, GRPCCancelledError } from 'etcd3';

/**
 * The etcd lease calls the store makes beside its transactions: one keep-alive, a revoke, and the
 * remaining TTL of a reservation. `options` carries each gRPC call's deadline.
 */
type CallOptions = { deadline: Date };

/** One keep-alive on a stream of its own; resolves the TTL etcd answered (0: lease gone). */
export async function keepAliveOnce(
  etcd: Etcd3,
  leaseId: string,
  signal: AbortSignal,
  options: CallOptions,
): Promise<number> {
  const stream = await etcd.leaseClient.leaseKeepAlive(options);
  const cancel = () => stream.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    return await new Promise<number>((resolve, reject) => {
      stream.on('data', (response: { TTL: string }) => resolve(Number(response.TTL)));
      stream.on('error', reject);
      stream.on('end', () => reject(new GRPCCancelledError('keep-alive stream ended')));
      stream.write({ ID: leaseId });
    });
  } finally {
    signal.removeEventListener('abort', cancel);
    stream.end();
  }
}

export async function revokeLease(etcd: Etcd3, leaseId: string, options: CallOptions): Promise<void> {
  try {
    await etcd.leaseClient.leaseRevoke({ ID: leaseId }, options);
  } catch (error) {
    // Already expired or revoked: that is what we wanted.
    if (!(error instanceof EtcdLeaseInvalidError)) throw error;
  }
}

/** Whole seconds left, rounded down by etcd (it ends within TTL + 1 s); -1 when the lease is gone. */
export async function remainingTtl(etcd: Etcd3, leaseId: string, options: CallOptions): Promise<number> {
  try {
    return Number((await etcd.leaseClient.leaseTimeToLive({ ID: leaseId }, options)).TTL);
  } catch (error) {
    if (error instanceof EtcdLeaseInvalidError) return -1;
    throw error;
  }
}
