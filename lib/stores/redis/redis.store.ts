// A static import is fine here: this file is reachable only through the `/redis` subpath, whose
// users have installed the optional peer `ioredis`.
import type { Redis } from 'ioredis';
import { LeaseLostError } from '../../shared/errors.js';
import {
  decodeHandoverRequest,
  encodeHandoverRequest,
  encodeLeaseMeta,
  releaseReservation,
} from '../handover-support.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  HandoverRequest,
  LeaderStateEntry,
  Lease,
  LeaseInfo,
  LeaseStore,
  LeaseStoreLimits,
  LeaseWatch,
  RecordWriteOptions,
  ReleaseOptions,
  RenewOptions,
  RenewWithOptions,
  RenewWithReply,
  SharedRecord,
  StateCallOptions,
} from '../lease-store.js';
import { isReplicaRequest } from '../lease-store.spread-rule.js';
import { decodeStateEntry, prepareStateWrite, stateKey, stateLostError } from '../state-support.js';
import { storeMessages as messages } from '../store.messages.js';
import { checkKeyPrefix, StoreCallKit, serverClockLimits } from '../store-support.js';
import { connectionOf, RedisClient, type RedisLeaseStoreOptions } from './redis-client.js';
import { classifyRedisError } from './redis-errors.js';
import { RedisKeys } from './redis-keys.js';
import { type RedisRecordCalls, RedisRecords } from './redis-records.js';
import { RedisRenewal } from './redis-renewal.js';
import { ReplicaAcks } from './redis-replica-acks.js';
import {
  ACQUIRE,
  CLEAR_HANDOVER,
  evalScript,
  metaOf,
  parseReservation,
  parseValue,
  RELEASE,
  RENEW,
  REQUEST_HANDOVER,
  WRITE_STATE,
} from './redis-scripts.js';
import { RedisSubscriber } from './redis-subscriber.js';

export type { RedisLeaseStoreOptions } from './redis-client.js';
export type { RedisReplicaAcks } from './redis-replica-acks.js';

const STORE = 'RedisLeaseStore';
const DEFAULT_PREFIX = 'leader-election:';

/**
 * Leases as Redis keys with a server-side expiry (`PX`): a Lua script takes the key only when it
 * is absent and bumps the election's term counter in the same step; renew (`PEXPIRE`) and release
 * (`DEL` + `PUBLISH`) are scripts that act only on our own lease id. {@link watch} subscribes on a
 * connection of its own, so followers contend the moment a leader releases.
 *
 * Leader state is a hash (field = key, value = JSON `{ value, term }`) written by a script that first
 * finds our lease id and term in the unexpired lease key.
 *
 * Handover: the holder's meta lives in the lease value (written by acquire and by a renew whose meta
 * changed, in their scripts). A release to a named identity deletes the lease and sets a
 * reservation key `{to, term}` with a server-side expiry (`PX reserveMs`) in one script; acquire
 * refuses anyone else while that key lives and its term is still the counter's, and deletes it when
 * the lease is taken. A handover request is one plain key, cleared by a script comparing its id.
 *
 * Shared records: a hash beside the lease that any replica writes by compare-and-set (redis-records.ts).
 *
 * A renewal folds what it carries and learns into one script call (`renewWith`, redis-renewal.ts).
 *
 * With `replicaAcks`, an acquire, renew, state or record write counts only once WAIT reports that
 * many replicas have it (redis-replica-acks.ts): a Sentinel failover then cannot lose a term we act on.
 *
 * Keep the counter, state and records keys from eviction (maxmemory-policy `noeviction` or a
 * `volatile-*` policy): if the counter vanished, terms would start again at 1.
 */
export class RedisLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = serverClockLimits('Redis');

  private readonly keys: RedisKeys;
  private readonly records: RedisRecords;
  private readonly renewal: RedisRenewal;
  private readonly redis: RedisClient;
  private readonly acks?: ReplicaAcks;
  private subscriber?: RedisSubscriber;
  private readonly calls = new StoreCallKit({
    name: STORE,
    classify: (error) => classifyRedisError(error, this.keys.prefix),
    onBusy: (busy) => this.redis.holdProcess(busy),
  });

  constructor(options: RedisLeaseStoreOptions) {
    if (!options?.client === !options?.connection) {
      throw new TypeError(
        messages.backend.clientOrConnection(STORE, 'an ioredis Redis client', 'a Redis URL or ioredis options'),
      );
    }
    this.keys = new RedisKeys(checkKeyPrefix(STORE, options.keyPrefix ?? DEFAULT_PREFIX));
    this.acks = ReplicaAcks.from(options.replicaAcks);
    const calls: RedisRecordCalls = {
      run: (signal, work) => this.run(signal, work),
      acknowledged: (client, write, written) => this.acknowledged(client, write, written),
    };
    this.records = new RedisRecords(this, this.keys, calls);
    this.renewal = new RedisRenewal(this, this.keys, calls);
    this.redis = new RedisClient(this.calls, options.client, options.client ? undefined : connectionOf(options));
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    const meta = encodeLeaseMeta(STORE, request.meta) ?? '';
    return this.calls.acquire(request, {
      attempt: async (leaseId) => {
        const keys = [this.keys.lease(election), this.keys.term(election), this.keys.reserved(election)];
        const client = this.getClient();
        const reply = await evalScript(client, ACQUIRE, keys, [leaseId, identity, leaseDurationMs, meta]);
        // The connection the reply came on (read before any other I/O event can replace it).
        const wroteOn = client.stream;
        const [outcome, raw, ttl, counter] = reply as [number | string, string, (number | string)?, string?];
        // PTTL: -1 no expiry, -2 gone (both: no hint, poll as usual).
        const expiresInMs = Number(ttl);
        const hint = expiresInMs >= 0 ? { expiresInMs } : {};
        if (Number(outcome) === 2) {
          return { acquired: false, term: Number(counter ?? 0), reservedFor: raw, ...hint };
        }
        const value = parseValue(raw);
        if (Number(outcome) === 1) {
          // Not acknowledged: thrown, so the attempt is given back like any unknown outcome.
          await this.acks?.confirm(client, wroteOn);
          return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(value.term) } };
        }
        const term = value.term === undefined ? undefined : Number(value.term);
        return { acquired: false, holder: value.holder, term, ...hint, ...metaOf(value) };
      },
      releaseAttempt: (leaseId, signal) =>
        this.run(signal, (client) => this.releaseScript(client, election, leaseId, '')),
    });
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const meta = encodeLeaseMeta(STORE, options.meta) ?? '';
    const args = [lease.leaseId, lease.term, options.leaseDurationMs, meta];
    const renewed = await this.run(options.signal, (client) =>
      this.acknowledged(client, () => evalScript(client, RENEW, [this.keys.lease(lease.election)], args)),
    );
    if (Number(renewed) !== 1) throw new LeaseLostError(messages.leaseLost(lease.election));
  }

  renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    return this.renewal.renewWith(lease, options);
  }

  async release(lease: Lease, options: ReleaseOptions): Promise<void> {
    const reservation = releaseReservation(options, this.limits);
    await this.run(options.signal, (client) =>
      this.releaseScript(client, lease.election, lease.leaseId, String(lease.term), reservation),
    );
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const [raw, counter, reserved] = await this.run(options.signal, (client) =>
      client.mget(this.keys.lease(election), this.keys.term(election), this.keys.reserved(election)),
    );
    if (raw) {
      const value = parseValue(raw);
      return { held: true, holder: value.holder, term: Number(value.term ?? counter ?? 0), ...metaOf(value) };
    }
    const term = Number(counter ?? 0);
    // The key expires by itself (PX); its term tag voids it once anyone took the lease since.
    const reservation = parseReservation(reserved);
    return reservation?.term === term ? { held: false, term, reservedFor: reservation.to } : { held: false, term };
  }

  readonly conditionalSpreadRequests = true;

  async requestHandover(request: HandoverRequest, options: CallOptions): Promise<boolean> {
    const json = encodeHandoverRequest(STORE, request);
    const args = [json, isReplicaRequest(request.reason) ? '1' : '0', request.term];
    const reply = await this.run(options.signal, (client) =>
      evalScript(client, REQUEST_HANDOVER, [this.keys.handover(request.election)], args),
    );
    return Number(reply) === 1;
  }

  async readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    const raw = await this.run(options.signal, (client) => client.get(this.keys.handover(election)));
    return decodeHandoverRequest(raw);
  }

  async clearHandover(election: string, id: string, options: CallOptions): Promise<void> {
    await this.run(options.signal, (client) =>
      evalScript(client, CLEAR_HANDOVER, [this.keys.handover(election)], [id]),
    );
  }

  /** SCAN (never KEYS: it would block the server) over this prefix; one command per 1000 keys. */
  async listElections(options: CallOptions): Promise<string[]> {
    const pattern = `${this.keys.prefix.replace(/[*?[\]\\]/g, '\\$&')}{*`;
    return this.calls.run(options.signal, async (step) => {
      const client = this.getClient();
      const names = new Set<string>();
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        for (const key of keys) {
          const name = this.keys.electionOf(key);
          if (name !== undefined) names.add(name);
        }
        cursor = next;
        step();
      } while (cursor !== '0');
      return [...names].sort();
    });
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this, lease, value, options);
    const keys = [this.keys.lease(lease.election), this.keys.state(lease.election)];
    const written = await this.run(options.signal, (client) =>
      this.acknowledged(client, () => evalScript(client, WRITE_STATE, keys, [lease.leaseId, lease.term, key, entry])),
    );
    if (Number(written) !== 1) throw stateLostError(lease);
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const raw = await this.run(options.signal, (client) => client.hget(this.keys.state(election), key));
    return raw == null ? undefined : decodeStateEntry(STORE, election, key, raw);
  }

  readRecord(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    return this.records.read(election, key, options);
  }

  writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    return this.records.write(election, key, value, options);
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    this.subscriber ??= new RedisSubscriber(this.keys.channel, () => this.getClient());
    return this.subscriber.add(election, onMayBeFree);
  }

  close(): Promise<void> {
    return this.calls.close({
      stopWatching: async () => this.subscriber?.close(),
      // Only our own client: a client the user passed in stays theirs.
      disconnect: () => this.redis.disconnect(),
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  private releaseScript(
    client: Redis,
    election: string,
    leaseId: string,
    term: string,
    reservation?: { to: string; ms: number },
  ): Promise<unknown> {
    const keys = [this.keys.lease(election), this.keys.reserved(election)];
    const args = [leaseId, term, this.keys.channel, election, reservation?.to ?? '', reservation?.ms ?? 0];
    return evalScript(client, RELEASE, keys, args);
  }

  /** A script's reply; with replicaAcks, a "written" one (1 unless `written` says) only once the replicas have it. */
  private async acknowledged(
    client: Redis,
    write: () => Promise<unknown>,
    written = (reply: unknown) => Number(reply) === 1,
  ): Promise<unknown> {
    const value = await write();
    const wroteOn = client.stream;
    if (written(value)) await this.acks?.confirm(client, wroteOn);
    return value;
  }

  /**
   * `work` bounded by `signal`. ioredis cannot take a command back, so an abandoned command may
   * still run (e.g. from the offline queue after a reconnect).
   */
  private run<T>(signal: AbortSignal, work: (client: Redis) => Promise<T>): Promise<T> {
    return this.calls.run(signal, () => work(this.getClient()));
  }

  private getClient(): Redis {
    return this.redis.getClient();
  }
}
