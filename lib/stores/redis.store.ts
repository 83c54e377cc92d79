import { createHash, randomUUID } from 'node:crypto';
// A static import is fine here: this file is reachable only through the `/redis` subpath, whose
// users have installed the optional peer `ioredis`.
import { Redis, type RedisOptions } from 'ioredis';
import { messages } from '../leader-election.messages.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  FatalLeaseStoreError,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreError,
  type LeaseStoreLimits,
  type LeaseWatch,
  type RenewOptions,
  TransientLeaseStoreError,
} from './lease-store.js';
import { settleWithin, throwIfAborted, untilAbortedUndoing } from '../shared/abort.js';

const STORE = 'RedisLeaseStore';
const DEFAULT_PREFIX = 'leader-election:';
const PREFIX = /^[\x21-\x7e]{0,200}$/;
/** How long close() waits for in-flight clean-ups before disconnecting anyway. */
const CLOSE_GRACE_MS = 5_000;

// The scripts run atomically on the server, so check-then-act needs no lock. A lease value is
// JSON {leaseId, holder, term}; renew and release act only when its leaseId (and term) are ours.

/** KEYS: lease, term counter. ARGV: lease id, holder, duration ms. → {1, value} or {0, current value}. */
const ACQUIRE = script(`
local current = redis.call('GET', KEYS[1])
if current then return {0, current} end
-- The counter moves only on success: terms strictly increase across holders, without gaps.
local term = redis.call('INCR', KEYS[2])
local value = cjson.encode({ leaseId = ARGV[1], holder = ARGV[2], term = term })
redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[3])
return {1, value}`);

/** KEYS: lease. ARGV: lease id, term, duration ms. → 1 renewed, 0 not ours. */
const RENEW = script(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or lease.leaseId ~= ARGV[1] or lease.term ~= tonumber(ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`);

/** KEYS: lease. ARGV: lease id, term ('' = any), channel, election. → 1 released, 0 not ours. */
const RELEASE = script(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or lease.leaseId ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' and lease.term ~= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`);

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
   * `<prefix>{<election>}` (the lease) and `<prefix>{<election>}:term` (the fencing counter): the
   * braces keep both in one Redis Cluster slot.
   */
  keyPrefix?: string;
}

interface LeaseValue {
  leaseId?: string;
  holder?: string;
  term?: number;
}

interface Script {
  lua: string;
  sha: string;
}

/**
 * Leases as Redis keys with a server-side expiry (`PX`): a Lua script takes the key only when it
 * is absent and bumps the election's term counter in the same step; renew (`PEXPIRE`) and release
 * (`DEL` + `PUBLISH`) are scripts that act only on our own lease id. {@link watch} subscribes on a
 * connection of its own, so followers contend the moment a leader releases.
 *
 * Keep the counter key from eviction (maxmemory-policy `noeviction` or a `volatile-*` policy): if
 * it vanished, terms would start again at 1.
 */
export class RedisLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = {
    minLeaseDurationMs: 1_000,
    maxLeaseDurationMs: 24 * 3_600_000,
    reason: messages.backend.shortLeaseReason('Redis'),
  };

  private readonly prefix: string;
  private readonly channel: string;
  private readonly userClient?: Redis;
  private readonly connection?: { url?: string; options: RedisOptions };
  private client?: Redis;
  private subscriber?: Subscriber;
  /** Clean-ups of abandoned acquires; close() lets them finish before disconnecting. */
  private readonly pending = new Set<Promise<unknown>>();
  private closing?: Promise<void>;
  private ended = false;

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
      this.connection =
        typeof options.connection === 'string'
          ? { url: options.connection, options: defaults }
          : { options: { ...defaults, ...options.connection } };
    }
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs, signal } = request;
    const leaseId = randomUUID();
    const reply = await this.run(
      signal,
      (client) =>
        this.eval(
          client,
          ACQUIRE,
          [this.leaseKey(election), this.termKey(election)],
          [leaseId, identity, leaseDurationMs],
        ),
      // Aborted, yet the script may still run: hand back whatever it took, by our fresh lease id.
      () => this.releaseKey(election, leaseId, '', leaseDurationMs),
    );
    const [won, raw] = reply as [number | string, string];
    const value = parseValue(raw);
    if (Number(won) === 1) {
      return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(value.term) } };
    }
    return { acquired: false, holder: value.holder, term: value.term === undefined ? undefined : Number(value.term) };
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

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    this.subscriber ??= new Subscriber(this.channel, () => this.getClient());
    return this.subscriber.add(election, onMayBeFree);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.subscriber?.close();
      await settleWithin([...this.pending], CLOSE_GRACE_MS);
      this.ended = true;
      // Only our own client: a client the user passed in stays theirs.
      this.client?.disconnect();
    })();
    return this.closing;
  }

  // ---- internals ------------------------------------------------------------------------------

  private leaseKey(election: string): string {
    return `${this.prefix}{${election}}`;
  }

  private termKey(election: string): string {
    return `${this.prefix}{${election}}:term`;
  }

  private releaseScript(client: Redis, election: string, leaseId: string, term: string): Promise<unknown> {
    return this.eval(client, RELEASE, [this.leaseKey(election)], [leaseId, term, this.channel, election]);
  }

  /** Release of an acquire we stopped waiting for, by lease id alone; moot once the lease expired. */
  private releaseKey(election: string, leaseId: string, term: string, leaseDurationMs: number): Promise<unknown> {
    return this.run(AbortSignal.timeout(leaseDurationMs), (client) =>
      this.releaseScript(client, election, leaseId, term),
    );
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
   * Run `work` bounded by `signal`. ioredis cannot take a command back, so the call settles on
   * abort while the command may still run (e.g. from the offline queue after a reconnect);
   * `onAbandoned` runs once it has ended, whatever its outcome.
   */
  private async run<T>(signal: AbortSignal, work: (client: Redis) => Promise<T>, onAbandoned?: () => Promise<unknown>) {
    throwIfAborted(signal);
    const running = this.getClient().then(work);
    try {
      // Only an abandoned acquire needs undoing; other calls are simply left to finish.
      return await untilAbortedUndoing(signal, running, this.pending, onAbandoned);
    } catch (error) {
      throw this.classify(error);
    }
  }

  private async getClient(): Promise<Redis> {
    if (this.ended) throw new TransientLeaseStoreError(messages.backend.closed(STORE));
    if (this.userClient) return this.userClient;
    if (!this.client) {
      const { url, options } = this.connection as { url?: string; options: RedisOptions };
      this.client = url === undefined ? new Redis(options) : new Redis(url, options);
      // Connection failures surface as rejected commands; without a listener ioredis would also
      // print every reconnection error to the console.
      this.client.on('error', () => undefined);
    }
    return this.client;
  }

  private classify(error: unknown): LeaseStoreError {
    if (error instanceof TransientLeaseStoreError || error instanceof FatalLeaseStoreError) return error;
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

// ---- subscriber ---------------------------------------------------------------------------------

/**
 * One subscriber connection per store (a duplicate of the command client: subscribing takes a
 * connection over), shared by every watched election. ioredis reconnects and resubscribes on its
 * own; after a reconnect every watcher is woken once, since a release may have been missed.
 */
class Subscriber {
  private readonly watchers = new Map<string, Set<() => void>>();
  private connection?: Promise<Redis | undefined>;
  private closing = false;

  constructor(
    private readonly channel: string,
    private readonly commandClient: () => Promise<Redis>,
  ) {}

  add(election: string, onMayBeFree: () => void): LeaseWatch {
    const set = this.watchers.get(election) ?? new Set();
    this.watchers.set(election, set);
    set.add(onMayBeFree);
    this.connection ??= this.open().catch(() => undefined);
    return {
      close: async () => {
        set.delete(onMayBeFree);
        if (set.size === 0) this.watchers.delete(election);
      },
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    const subscriber = await this.connection;
    subscriber?.disconnect();
  }

  private async open(): Promise<Redis> {
    // Subscribing must wait for the connection rather than fail fast, and may retry forever.
    const subscriber = (await this.commandClient()).duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
    let readyBefore = false;
    subscriber.on('error', () => undefined);
    subscriber.on('ready', () => {
      if (readyBefore) this.wakeAll();
      readyBefore = true;
    });
    subscriber.on('message', (channel: string, election: string) => {
      if (channel !== this.channel) return;
      for (const listener of this.watchers.get(election) ?? []) listener();
    });
    if (this.closing) {
      subscriber.disconnect();
      return subscriber;
    }
    void subscriber.subscribe(this.channel).catch(() => undefined);
    return subscriber;
  }

  private wakeAll(): void {
    for (const set of this.watchers.values()) for (const listener of set) listener();
  }
}

// ---- helpers ------------------------------------------------------------------------------------

function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

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
