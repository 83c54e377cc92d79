// A static import is fine here: this file is reachable only through the `/redis` subpath, whose
// users have installed the optional peer `ioredis`.
import { Redis, type RedisOptions } from 'ioredis';
import { messages } from '../../leader-election.messages.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  FatalLeaseStoreError,
  type LeaderStateEntry,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreError,
  type LeaseStoreLimits,
  type LeaseWatch,
  type RenewOptions,
  type StateCallOptions,
  TransientLeaseStoreError,
} from '../lease-store.js';
import { decodeStateEntry, prepareStateWrite, stateKey, stateLostError } from '../state-support.js';
import { checkConnectionUrl, StoreCalls, serverClockLimits } from '../store-support.js';
import { ACQUIRE, RELEASE, RENEW, type Script, WRITE_STATE } from './redis-scripts.js';
import { RedisSubscriber } from './redis-subscriber.js';

const STORE = 'RedisLeaseStore';
const DEFAULT_PREFIX = 'leader-election:';
const PREFIX = /^[\x21-\x7e]{0,200}$/;
const URL_PROTOCOLS = ['redis:', 'rediss:'];

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
   * `<prefix>{<election>}` (the lease), `<prefix>{<election>}:term` (the fencing counter) and
   * `<prefix>{<election>}:state` (the leader-state hash): the braces keep them in one Redis
   * Cluster slot, so one script can check the lease and write the state.
   */
  keyPrefix?: string;
}

interface LeaseValue {
  leaseId?: string;
  holder?: string;
  term?: number;
}

/**
 * Leases as Redis keys with a server-side expiry (`PX`): a Lua script takes the key only when it
 * is absent and bumps the election's term counter in the same step; renew (`PEXPIRE`) and release
 * (`DEL` + `PUBLISH`) are scripts that act only on our own lease id. {@link watch} subscribes on a
 * connection of its own, so followers contend the moment a leader releases.
 *
 * Leader state is a hash (field = key, value = JSON `{ value, term }`) written by a script that first
 * finds our lease id and term in the unexpired lease key.
 *
 * Keep the counter and state keys from eviction (maxmemory-policy `noeviction` or a `volatile-*` policy): if
 * it vanished, terms would start again at 1.
 */
export class RedisLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = serverClockLimits('Redis');

  private readonly prefix: string;
  private readonly channel: string;
  private readonly userClient?: Redis;
  private readonly connection?: { url?: string; options: RedisOptions };
  private client?: Redis;
  private subscriber?: RedisSubscriber;
  private readonly calls = new StoreCalls({
    name: STORE,
    classify: (error) => this.classify(error),
    onBusy: (busy) => this.holdProcess(busy),
  });
  private busy = false;

  constructor(options: RedisLeaseStoreOptions) {
    if (!options?.client === !options?.connection) {
      throw new TypeError(
        messages.backend.clientOrConnection(STORE, 'an ioredis Redis client', 'a Redis URL or ioredis options'),
      );
    }
    const prefix = options.keyPrefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
      throw new TypeError(messages.backend.invalidPrefix(STORE, 'keyPrefix', prefix));
    }
    this.prefix = prefix;
    this.channel = `${prefix}released`;
    this.userClient = options.client;
    if (!options.client) {
      // Bounded: a command waits for at most one reconnection, and the signal bounds it anyway.
      // A short disconnect timeout: ioredis keeps a (non-unref'd) timer that long after
      // disconnecting from a dead server, which would hold up the process's exit.
      const defaults: RedisOptions = { connectTimeout: 5_000, maxRetriesPerRequest: 1, disconnectTimeout: 500 };
      if (typeof options.connection === 'string') {
        checkConnectionUrl(STORE, 'connection', options.connection, URL_PROTOCOLS, 'redis://user:password@host:6379/0');
      }
      this.connection =
        typeof options.connection === 'string'
          ? { url: options.connection, options: defaults }
          : { options: { ...defaults, ...options.connection } };
    }
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    return this.calls.acquire(request, {
      attempt: async (leaseId) => {
        const keys = [this.leaseKey(election), this.termKey(election)];
        const reply = await this.eval(this.getClient(), ACQUIRE, keys, [leaseId, identity, leaseDurationMs]);
        const [won, raw, ttl] = reply as [number | string, string, (number | string)?];
        const value = parseValue(raw);
        if (Number(won) === 1) {
          return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(value.term) } };
        }
        const term = value.term === undefined ? undefined : Number(value.term);
        // PTTL: -1 no expiry, -2 gone (both: no hint, poll as usual).
        const expiresInMs = Number(ttl);
        const hint = expiresInMs >= 0 ? { expiresInMs } : {};
        return { acquired: false, holder: value.holder, term, ...hint };
      },
      releaseAttempt: (leaseId, signal) =>
        this.run(signal, (client) => this.releaseScript(client, election, leaseId, '')),
    });
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const renewed = await this.run(options.signal, (client) =>
      this.eval(client, RENEW, [this.leaseKey(lease.election)], [lease.leaseId, lease.term, options.leaseDurationMs]),
    );
    if (Number(renewed) !== 1) throw new LeaseLostError(messages.leaseLost(lease.election));
  }

  async release(lease: Lease, options: CallOptions): Promise<void> {
    await this.run(options.signal, (client) =>
      this.releaseScript(client, lease.election, lease.leaseId, String(lease.term)),
    );
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const [raw, counter] = await this.run(options.signal, (client) =>
      client.mget(this.leaseKey(election), this.termKey(election)),
    );
    if (raw) {
      const value = parseValue(raw);
      return { held: true, holder: value.holder, term: Number(value.term ?? counter ?? 0) };
    }
    return { held: false, term: Number(counter ?? 0) };
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this, lease, value, options);
    const keys = [this.leaseKey(lease.election), this.stateKey(lease.election)];
    const written = await this.run(options.signal, (client) =>
      this.eval(client, WRITE_STATE, keys, [lease.leaseId, lease.term, key, entry]),
    );
    if (Number(written) !== 1) throw stateLostError(lease);
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const raw = await this.run(options.signal, (client) => client.hget(this.stateKey(election), key));
    return raw == null ? undefined : decodeStateEntry(STORE, election, key, raw);
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    this.subscriber ??= new RedisSubscriber(this.channel, () => this.getClient());
    return this.subscriber.add(election, onMayBeFree);
  }

  close(): Promise<void> {
    return this.calls.close({
      stopWatching: async () => this.subscriber?.close(),
      // Only our own client: a client the user passed in stays theirs.
      disconnect: () => this.client?.disconnect(),
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  private leaseKey(election: string): string {
    return `${this.prefix}{${election}}`;
  }

  private termKey(election: string): string {
    return `${this.prefix}{${election}}:term`;
  }

  private stateKey(election: string): string {
    return `${this.prefix}{${election}}:state`;
  }

  private releaseScript(client: Redis, election: string, leaseId: string, term: string): Promise<unknown> {
    return this.eval(client, RELEASE, [this.leaseKey(election)], [leaseId, term, this.channel, election]);
  }

  /** EVALSHA, falling back to EVAL the first time the server has not cached the script. */
  private async eval(client: Redis, { sha, lua }: Script, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (replyCode(error) !== 'NOSCRIPT') throw error;
      return client.eval(lua, keys.length, ...keys, ...args);
    }
  }

  /**
   * `work` bounded by `signal`. ioredis cannot take a command back, so an abandoned command may
   * still run (e.g. from the offline queue after a reconnect).
   */
  private run<T>(signal: AbortSignal, work: (client: Redis) => Promise<T>): Promise<T> {
    return this.calls.run(signal, () => work(this.getClient()));
  }

  private getClient(): Redis {
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
  private holdProcess(busy: boolean): void {
    this.busy = busy;
    const stream = this.client?.stream;
    if (busy) stream?.ref?.();
    else stream?.unref?.();
  }

  private classify(error: unknown): LeaseStoreError {
    const reply = replyCode(error);
    // ioredis attaches the failed command to a reply error, and HELLO/AUTH carry the password.
    const options = carriesCredentials(error) ? undefined : { cause: error };
    switch (reply) {
      case 'NOAUTH':
      case 'WRONGPASS':
        return new FatalLeaseStoreError(messages.redis.authFailed(reply), options);
      case 'NOPERM':
        return new FatalLeaseStoreError(messages.redis.permissionDenied(this.prefix), options);
      case 'READONLY':
        return new TransientLeaseStoreError(messages.redis.replicaReadOnly, options);
      case undefined:
        return new TransientLeaseStoreError(messages.backend.unreachable(STORE, networkCode(error)), options);
      default:
        return new TransientLeaseStoreError(messages.backend.failed(STORE, reply), options);
    }
  }
}

// ---- helpers ------------------------------------------------------------------------------------

function parseValue(raw: string | null | undefined): LeaseValue {
  try {
    const value = JSON.parse(raw ?? '{}') as LeaseValue;
    return typeof value === 'object' && value ? value : {};
  } catch {
    return {};
  }
}

/** The server's error code (first word of a reply error, e.g. NOPERM); never the rest of it. */
function replyCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'ReplyError') return undefined;
  return /^[A-Z]+/.exec(error.message)?.[0] ?? 'ERR';
}

/** A reply error to the connection handshake quotes the credentials in its `command` field. */
function carriesCredentials(error: unknown): boolean {
  const name = (error as { command?: { name?: unknown } } | undefined)?.command?.name;
  return typeof name === 'string' && /^(hello|auth)$/i.test(name);
}

function networkCode(error: unknown): string {
  const value = (error as { code?: unknown } | undefined)?.code;
  if (typeof value === 'string') return value;
  if (error instanceof Error) {
    if (/closed/i.test(error.message)) return 'connection closed';
    if (/timed? ?out/i.test(error.message)) return 'timeout';
    return error.name;
  }
  return 'unknown error';
}
