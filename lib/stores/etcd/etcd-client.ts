// A static import is fine here: this file is reachable only through the `/etcd` subpath, whose
// users have installed the optional peer `etcd3`.
import { Etcd3, type IOptions } from 'etcd3';
import { storeMessages as messages } from '../store.messages.js';
import type { StoreCallKit } from '../store-support.js';
import { revokeLease } from './etcd-leases.js';
import { memberSkipPolicy } from './etcd-member-skip.js';
import { WatchRedialBackoff } from './etcd-watch-backoff.js';

const STORE = 'EtcdLeaseStore';

/** An endpoint: `host:port`, optionally after `http://` or `https://`. */
const ENDPOINT = /^(https?:\/\/)?[^\s/:@]+(:\d{1,5})?\/?$|^(https?:\/\/)?\[[0-9a-fA-F:.]+\](:\d{1,5})?\/?$/;

/** Options of `new EtcdLeaseStore(...)`: the endpoints and the key prefix. */
export interface EtcdLeaseStoreOptions {
  /** An existing etcd3 client. The store never closes it. */
  client?: Etcd3;
  /**
   * Endpoint(s) (`http://host:2379`; several as an array or one comma-separated string, as in
   * etcdctl's `--endpoints`: list every member of a cluster) or etcd3 options for a client the store
   * opens (and closes in `close()`). Each call goes to one member (etcd3 picks at random); one that
   * fails is retried by the elector on its schedule, so a dead or frozen member costs at most a call. Defaults added unless given: dial timeout 5 s, no client-side retries, gRPC
   * keep-alive (a ping every 6 s while a call or the watch is open, the connection given up 4 s
   * after an unanswered one; override with `grpcOptions`). A client you pass as `client` gets none
   * of these: give it a keep-alive (`grpc.keepalive_time_ms` ≥ 5000, `grpc.keepalive_timeout_ms`),
   * or a black-holed connection is detected only by each call's deadline.
   */
  connection?: string | string[] | IOptions;
  /**
   * Prefix of the keys: `<prefix><election>` is the lease key, `<prefix><election>/term` records
   * the last term, `<prefix><election>/state/<key>` holds leader state, `<prefix><election>/reserved`
   * a directed handover's reservation, `<prefix><election>/handover` the pending handover
   * request and `<prefix><election>/records/<key>` a shared record. Default `leader-election/`.
   */
  keyPrefix?: string;
  /**
   * Upper bound of one gRPC call (its deadline), besides the caller's signal, and of a watch's
   * cancel (etcd3 waits for etcd's answer to it). Default 10000.
   */
  callTimeoutMs?: number;
}

type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;
type WatchBackoff = NonNullable<IOptions['faultHandling']>['watchBackoff'];

/**
 * No retries and no circuit breaker across members for the client we open: the elector retries on
 * its own schedule, and etcd3's default breaker would refuse every call for 5 s after 3 failures.
 * Per member, with several: skip a failing one for 2 s (etcd-member-skip.ts).
 */
const NO_POLICY = {
  execute: (fn: (context: { signal: AbortSignal }) => unknown, signal?: AbortSignal) =>
    Promise.resolve().then(() => fn({ signal: signal ?? new AbortController().signal })),
} as unknown as Policy;

/**
 * gRPC keep-alive of the client we open. Without it a connection whose bytes stop while the socket
 * stays open (a partition, a proxy that keeps the connection) is never given up: the watch stream
 * stays blind and a watch cancel waits for ever. A ping every {@link KEEPALIVE_TIME_MS} after the
 * last answer, given up {@link KEEPALIVE_TIMEOUT_MS} later: a dead connection is closed within
 * 10 s of its last sign of life (under the default lease of 15 s), its calls fail and the watch
 * redials. Pings only while a call is open (the watch stream is one): etcd refuses pings on an idle
 * connection (`PermitWithoutStream` false) and pings closer than its `--grpc-keepalive-min-time`
 * (5 s by default); either way it answers GOAWAY too_many_pings after 3 of them.
 */
const KEEPALIVE_TIME_MS = 6_000;
const KEEPALIVE_TIMEOUT_MS = 4_000;
const KEEPALIVE = {
  'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
  'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
  'grpc.keepalive_permit_without_calls': 0,
};

/**
 * Options of the client the store opens: no client-side retries, a 5 s dial timeout, keep-alive, and
 * a watch redial back-off that never outlives the store (etcd-watch-backoff.ts).
 */
function etcdClientOptions(connection: string | string[] | IOptions, closed: () => boolean): IOptions {
  const config =
    typeof connection === 'string'
      ? { hosts: connection.includes(',') ? connection.split(',').map((host) => host.trim()) : connection }
      : Array.isArray(connection)
        ? { hosts: connection }
        : connection;
  const hosts = config?.hosts;
  const list = Array.isArray(hosts) ? hosts : [hosts];
  for (const host of list.length === 0 ? [undefined] : list) {
    if (typeof host !== 'string' || !ENDPOINT.test(host)) {
      const option = typeof connection === 'object' && !Array.isArray(connection) ? 'connection.hosts' : 'connection';
      throw new TypeError(
        messages.storeOptions.connectionInvalid(
          STORE,
          option,
          'http://host:2379, https://host:2379 or host:2379 (several: an array, or comma-separated)',
        ),
      );
    }
  }
  return {
    dialTimeout: 5_000,
    ...config,
    grpcOptions: { ...KEEPALIVE, ...config.grpcOptions },
    faultHandling: {
      // One member: nothing to skip to, and a skip would only delay the recovery.
      host: list.length > 1 ? () => memberSkipPolicy() as unknown as Policy : () => NO_POLICY,
      global: NO_POLICY,
      watchBackoff: new WatchRedialBackoff(closed) as unknown as WatchBackoff,
      ...config.faultHandling,
    },
  };
}

/** The store's way to its server: the user's client, or one of its own (opened on first use, closed by {@link close}). */
export class EtcdClient {
  private readonly userClient?: Etcd3;
  private readonly connection?: IOptions;
  private client?: Etcd3;
  private closed = false;
  private readonly callTimeoutMs: number;

  constructor(
    /** Throws once the store is closed: nothing reopens a client then. */
    private readonly calls: Pick<StoreCallKit, 'assertOpen'>,
    options: EtcdLeaseStoreOptions,
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? 10_000;
    this.userClient = options.client;
    if (!options.client) {
      this.connection = etcdClientOptions(options.connection as string | string[] | IOptions, () => this.closed);
    }
  }

  getClient(): Etcd3 {
    this.calls.assertOpen();
    this.client ??= this.userClient ?? new Etcd3(this.connection);
    return this.client;
  }

  /** A deadline for one gRPC call, so nothing we abandon lingers on the channel for long. */
  deadline(): { deadline: Date } {
    return { deadline: new Date(Date.now() + this.callTimeoutMs) };
  }

  /** Revokes an etcd lease (the keys attached to it go with it); one already gone is fine. */
  revoke(leaseId: string): Promise<void> {
    return revokeLease(this.getClient(), leaseId, this.deadline());
  }

  /** Only our own client: a client the user passed in stays theirs. */
  close(): unknown {
    this.closed = true;
    return this.client !== this.userClient && this.client?.close();
  }
}
