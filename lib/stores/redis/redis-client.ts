// A static import is fine here: this file is reachable only through the `/redis` subpath, whose
// users have installed the optional peer `ioredis`.
import { Redis, type RedisOptions } from 'ioredis';
import { checkConnectionUrl, type StoreCallKit } from '../store-support.js';
import type { RedisReplicaAcks } from './redis-replica-acks.js';

const STORE = 'RedisLeaseStore';
const URL_PROTOCOLS = ['redis:', 'rediss:'];

/** Options of `new RedisLeaseStore(...)`: the connection and the key prefix. */
export interface RedisLeaseStoreOptions {
  /** An existing ioredis client. The store never closes it (watch() opens a duplicate of its own). */
  client?: Redis;
  /**
   * Redis URL or ioredis options for a client the store opens (and closes in `close()`).
   * Defaults added unless given: connect timeout 5 s, at most 1 retry per command, disconnect
   * timeout 0.5 s.
   */
  connection?: string | RedisOptions;
  /**
   * Prefix of every key and of the release channel. Default `leader-election:`. Keys are
   * `<prefix>{<election>}` (the lease), `<prefix>{<election>}:term` (the fencing counter),
   * `<prefix>{<election>}:state` (the leader-state hash), `<prefix>{<election>}:reserved` (a
   * directed handover's reservation), `<prefix>{<election>}:handover` (the pending handover
   * request) and `<prefix>{<election>}:records` (the shared-records hash): the braces keep them in
   * one Redis Cluster slot, so one script can check the lease and write the others.
   */
  keyPrefix?: string;
  /**
   * Count an acquire, renew, leader-state or shared-record write only once this many replicas acknowledged it
   * (`WAIT`), so a failover to a replica cannot lose a term the leader acts on. Off by default.
   * Not consensus: see "When the store itself fails over" in docs/guides/stores.md.
   */
  replicaAcks?: RedisReplicaAcks;
}

/** How the store opens its own client: the URL (checked before anything connects), with our defaults under the user's options. */
export function connectionOf(options: RedisLeaseStoreOptions): { url?: string; options: RedisOptions } {
  // Bounded: a command waits for at most one reconnection, and the signal bounds it anyway.
  // A short disconnect timeout: ioredis keeps a (non-unref'd) timer that long after
  // disconnecting from a dead server, which would hold up the process's exit.
  const defaults: RedisOptions = { connectTimeout: 5_000, maxRetriesPerRequest: 1, disconnectTimeout: 500 };
  if (typeof options.connection === 'string') {
    checkConnectionUrl(STORE, 'connection', options.connection, URL_PROTOCOLS, 'redis://user:password@host:6379/0');
  }
  return typeof options.connection === 'string'
    ? { url: options.connection, options: defaults }
    : { options: { ...defaults, ...options.connection } };
}

/**
 * The store's way to its server: the user's client, or one of its own (opened on first use,
 * disconnected by {@link disconnect}), which holds the process only while a call is in flight.
 */
export class RedisClient {
  private client?: Redis;
  private busy = false;

  constructor(
    /** Throws once the store is closed: nothing reopens a client then. */
    private readonly calls: Pick<StoreCallKit, 'assertOpen'>,
    private readonly userClient?: Redis,
    private readonly connection?: { url?: string; options: RedisOptions },
  ) {}

  getClient(): Redis {
    this.calls.assertOpen();
    if (this.userClient) return this.userClient;
    if (!this.client) {
      const { url, options } = this.connection as { url?: string; options: RedisOptions };
      this.client = url === undefined ? new Redis(options) : new Redis(url, options);
      // Connection failures surface as rejected commands; without a listener ioredis would also
      // print every reconnection error to the console.
      this.client.on('error', () => undefined);
      this.client.on('connect', () => this.holdProcess(this.busy));
    }
    return this.client;
  }

  /**
   * Our own connection holds the process only while a call is in flight: once the elector stopped,
   * an idle store does not keep the process alive (a user's client stays as the user made it).
   */
  holdProcess(busy: boolean): void {
    this.busy = busy;
    const stream = this.client?.stream;
    if (busy) stream?.ref?.();
    else stream?.unref?.();
  }

  /** Only our own client: a client the user passed in stays theirs. */
  disconnect(): void {
    this.client?.disconnect();
  }
}
