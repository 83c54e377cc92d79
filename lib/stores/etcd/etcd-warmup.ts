import type { Etcd3 } from 'etcd3';
import type { StoreCallKit } from '../store-support.js';

/**
 * A process's first call of a gRPC method is slow: protobufjs generates each message type's
 * encoder and decoder on first use. A follower makes its first lease grant and its first
 * create-if-absent transaction exactly when it matters, on a handover, and the leader its first
 * revoke when it releases. Measured on a fresh process with a warm connection (quiet 2-core
 * machine, bench/experiments/etcd-handover.mjs): the first transaction 9–14 ms, 3–4 ms once warm.
 *
 * So each store encodes and decodes those messages once, locally, when its watch has connected:
 * nothing is sent, no call is made. Best effort: reaching the method definitions goes through
 * etcd3's connection pool (a protected field), so if a later etcd3 hides them this does nothing
 * and only the first handover is slower.
 */
export async function warmCodecs(etcd: Etcd3): Promise<void> {
  const pool = (etcd as unknown as { pool?: Partial<Pool> }).pool;
  if (typeof pool?.withConnection !== 'function') return;
  const key = Buffer.from('warm-up');
  const range = { request_range: { key } };
  const kv = { key, value: key, lease: '1', create_revision: '1', mod_revision: '1', version: '1' };
  const header = { revision: '1' };
  await warm(pool as Pool, 'Lease', {
    LeaseGrant: [
      { ID: '1', TTL: 2 },
      { header, ID: '1', TTL: '2' },
    ],
    LeaseRevoke: [{ ID: '1' }, { header }],
  });
  await warm(pool as Pool, 'KV', {
    Txn: [
      {
        compare: [{ key, result: 'Equal', target: 'Create', create_revision: '0' }],
        success: [{ request_put: { key, value: key, lease: '1' } }, { request_delete_range: { key } }],
        failure: [range],
      },
      {
        header,
        succeeded: true,
        responses: [
          { response_put: { header } },
          { response_delete_range: { header, deleted: '1' } },
          { response_range: { header, kvs: [kv], count: '1' } },
        ],
      },
    ],
  });
}

/**
 * The store's warm-up, called each time a watch has connected (every replica watches from its
 * start): {@link warmCodecs} once per store, in the background (tracked: close() waits for it).
 */
export function warmUpOnce(client: () => Etcd3, calls: Pick<StoreCallKit, 'track'>): () => void {
  let warmedUp = false;
  return () => {
    if (warmedUp) return;
    warmedUp = true;
    calls.track(
      Promise.resolve()
        .then(() => warmCodecs(client()))
        .catch(() => undefined),
    );
  };
}

/** What we use of etcd3's (unexported) ConnectionPool. */
type Pool = {
  withConnection<T>(
    service: 'KV' | 'Lease',
    fn: (args: { client: { constructor: unknown } }) => Promise<T>,
  ): Promise<T>;
};

type Codec = {
  requestSerialize?: (value: unknown) => Buffer;
  requestDeserialize?: (bytes: Buffer) => unknown;
  responseSerialize?: (value: unknown) => Buffer;
  responseDeserialize?: (bytes: Buffer) => unknown;
};

async function warm(
  pool: Pool,
  service: 'KV' | 'Lease',
  messages: Record<string, [request: unknown, response: unknown]>,
): Promise<void> {
  // Only builds the service's gRPC client (etcd3 caches it): nothing is sent.
  const definitions = await pool.withConnection(
    service,
    async ({ client }) => (client.constructor as { service?: Record<string, Codec> }).service,
  );
  for (const [method, [request, response]] of Object.entries(messages)) {
    const codec = definitions?.[method];
    if (!codec) continue;
    codec.requestDeserialize?.(codec.requestSerialize?.(request) ?? Buffer.alloc(0));
    codec.responseDeserialize?.(codec.responseSerialize?.(response) ?? Buffer.alloc(0));
  }
}
