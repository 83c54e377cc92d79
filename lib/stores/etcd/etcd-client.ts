import type { IOptions } from 'etcd3';
import { messages } from '../../leader-election.messages.js';

const STORE = 'EtcdLeaseStore';

/** An endpoint: `host:port`, optionally after `http://` or `https://`. */
const ENDPOINT = /^(https?:\/\/)?[^\s/:@]+(:\d{1,5})?\/?$|^(https?:\/\/)?\[[0-9a-fA-F:.]+\](:\d{1,5})?\/?$/;

type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * No retries and no circuit breaker for the client we open: the elector retries on its own
 * schedule, and etcd3's default breaker would refuse every call for 5 s after 3 failures.
 */
const NO_POLICY = {
  execute: (fn: (context: { signal: AbortSignal }) => unknown, signal?: AbortSignal) =>
    Promise.resolve().then(() => fn({ signal: signal ?? new AbortController().signal })),
} as unknown as Policy;

/** Options of the client the store opens: no client-side retries, a 5 s dial timeout. */
export function etcdClientOptions(connection: string | string[] | IOptions): IOptions {
  const config = typeof connection === 'string' || Array.isArray(connection) ? { hosts: connection } : connection;
  const hosts = config?.hosts;
  for (const host of Array.isArray(hosts) ? hosts : [hosts]) {
    if (typeof host !== 'string' || !ENDPOINT.test(host)) {
      const option = typeof connection === 'object' && !Array.isArray(connection) ? 'connection.hosts' : 'connection';
      throw new TypeError(
        messages.storeOptions.connectionInvalid(STORE, option, 'http://host:2379, https://host:2379 or host:2379'),
      );
    }
  }
  return {
    dialTimeout: 5_000,
    ...config,
    faultHandling: { host: () => NO_POLICY, global: NO_POLICY, ...config.faultHandling },
  };
}
